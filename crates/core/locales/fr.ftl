# Les mots de restock aux clients, en français.

duration-seconds = { $n ->
    [one] { $n } seconde
   *[other] { $n } secondes
}
duration-minutes = { $n ->
    [one] { $n } minute
   *[other] { $n } minutes
}
duration-hours = { $n ->
    [one] { $n } heure
   *[other] { $n } heures
}
duration-days = { $n ->
    [one] { $n } jour
   *[other] { $n } jours
}
duration-under-minute = moins d'une minute

greeting = Bonjour { $shopper },
button-fallback = Si le bouton ne fonctionne pas, ouvrez ce lien :
manage-link = Voir ou quitter votre place

notice-subject = { $product } est de retour chez { $store }
notice-fallback-phrase = Bonne nouvelle : il est de retour en stock, et nous vous en avons mis un de côté.
notice-back = { $product } est de nouveau en stock chez { $store }. Votre lien de réservation vous en garde un si vous l'ouvrez d'ici { $window }.
notice-button = Je réserve
notice-held-waits = Une fois réservé, il vous attend au paiement pendant un petit moment.
notice-passes-on = Sans réponse de votre part, il passe à la personne suivante sur la liste.
notice-stop = Ne plus recevoir ces messages
notice-sms = { $store } : { $product } est de retour. Touchez d'ici { $window } pour en réserver un : { $url } Répondez STOP pour vous désabonner
notice-sms-item = Votre article
reminder-subject = Toujours réservé pour vous : { $product } chez { $store }
reminder-phrase = Petit rappel : l'article mis de côté pour vous est encore à vous, pour un petit moment.
reminder-back = Votre lien de réservation pour { $product } vous en garde encore un si vous touchez d'ici { $window }.
reminder-sms = { $store } : un { $product } est encore mis de côté pour vous. Touchez d'ici { $window } pour le réserver : { $url } Répondez STOP pour vous désabonner

confirm-subject = Confirmez : prévenez-moi quand { $product } sera de retour chez { $store }
confirm-asked = Quelqu'un, vous nous l'espérons, a demandé à { $store } de prévenir cette adresse quand { $product } sera de nouveau en stock. Confirmez d'ici { $window } pour garder votre place dans la file.
confirm-button = Oui, prévenez-moi
confirm-not-you = Si ce n'était pas vous, ne faites rien : vous n'aurez plus de nouvelles de nous, et cette adresse sera supprimée dans { $window }.
confirm-together = Cette inscription indique aussi { $contact } : se désabonner ou réserver là-bas met aussi fin à votre place ici. Si ce n'est pas à vous, ne confirmez pas.
confirm-stop = Ne plus recevoir de messages de { $store }
confirm-sms = { $store } : confirmez d'ici { $window } pour être prévenu du retour de { $product } : { $url } Pas vous ? Ignorez ce message. Répondez STOP pour vous désabonner
confirm-sms-together = { $store } : confirmez d'ici { $window } pour être prévenu ici et à { $contact } du retour de { $product } : { $url } Pas vous ? Ignorez ce message. Répondez STOP pour vous désabonner
sms-help = { $store } : des SMS quand un article demandé est de retour, comme vous l'avez souhaité. Répondez STOP pour vous désabonner

## Les pages que voient les clients.

join-check-title = Consultez votre boîte de réception
join-check = Presque fini : nous avons envoyé un lien de confirmation à { $contact }. Ouvrez-le d'ici { $window } pour garder votre place (numéro { $position } dans la file) pour { $product }.
join-check-short = Cherchez le lien de confirmation envoyé à { $contact } et ouvrez-le d'ici { $window } pour garder votre place.
page-on-list-title = Vous êtes sur la liste
page-position = Vous êtes numéro { $position } dans la file pour { $product }.
page-position-told-once = Vous êtes numéro { $position } dans la file pour { $product }. Nous vous préviendrons une fois, dès son retour.
page-on-list = Vous êtes sur la liste pour { $product }.
page-wait-title = Un instant, s'il vous plaît
page-wait = Votre réseau a envoyé beaucoup de demandes. Réessayez ce lien dans { $time }.

page-reserve-title = Réservez votre { $product }
page-reserve-back = { $product } est de retour, et un exemplaire vous attend.
page-reserve-left = Ce lien vous en garde un encore { $time }.
page-reserve-button = Le réserver et passer au paiement
page-held-title = Il vous est réservé
page-held-left = Un { $product } vous est réservé encore { $time }.
page-held-number = Votre numéro de réservation est { $hold }. Indiquez-le au paiement.
page-checkout-button = Passer au paiement
page-ended-title = Ce lien de réservation a expiré
page-ended = Il n'était valable que peu de temps, et l'article est passé à la personne suivante.
page-used = Ce lien a déjà servi à un achat.
page-rejoin-button = Me remettre dans la file
page-sold-out-title = De nouveau épuisé, désolé
page-sold-out = Le dernier { $product } est parti juste avant votre clic.
page-sold-out-front = Vous gardez votre place en tête de file et serez prévenu en premier dès qu'un autre se libère.
page-invalid-title = Impossible de faire cela
page-invalid = Ce lien n'est plus valable. Inscrivez-vous de nouveau depuis la page du produit.
page-opted-out-title = Vous vous êtes désabonné
page-opted-out = Vous nous avez demandé de ne pas vous contacter, nous ne vous avons donc pas ajouté.
page-back-title = Vous êtes de retour dans la file

page-stop-title = Ne plus recevoir de messages ?
page-stop = Vous ne recevrez plus aucun message de notre part, pour aucun produit, à cette adresse ou à ce numéro.
page-stop-button = Ne plus recevoir de messages
page-link-unknown-title = Nous n'avons pas trouvé ce lien
page-link-unknown = Si vous recevez encore des messages, répondez STOP à un SMS ou contactez la boutique.
page-stopped-title = Vous êtes désabonné
page-stopped = Vous n'aurez plus de nouvelles de nous.

page-confirm-title = Confirmez votre place
page-confirm = Un clic pour confirmer que c'était bien vous et garder votre place dans la file.
page-confirm-button = Oui, prévenez-moi à son retour
page-confirm-ended-title = Ce lien de confirmation a expiré
page-confirm-ended = Il a peut-être expiré, ou l'inscription a été supprimée. Inscrivez-vous de nouveau depuis la page du produit.
page-manage-keep = Gardez ce lien : il n'est qu'à vous.
page-manage-from-email = Pour voir ou quitter votre place, utilisez le lien de l'un de nos e-mails.

page-manage-unknown-title = Nous n'avons pas trouvé cette inscription
page-manage-unknown = Elle est peut-être déjà terminée. Vous pouvez vous réinscrire depuis la page du produit.
page-manage-title = Votre place dans la file
page-manage-unconfirmed = Vous êtes numéro { $position } dans la file pour { $product }, dès que vous confirmez avec le lien envoyé.
page-manage-offered = Un { $product } vous est mis de côté : touchez le lien de réservation du message envoyé.
page-manage-held = Un { $product } vous est réservé : finalisez votre commande au paiement.
page-manage-ended = Cette inscription pour { $product } est terminée.
page-leave-button = Quitter la liste
page-left-title = Vous avez quitté la liste
page-left = Vous n'aurez plus de nouvelles de nous pour ce produit.
page-already-ended-title = Déjà terminée
page-already-ended = Cette inscription est déjà terminée.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Certains champs sont à revoir.
field-sku = Indiquez le produit que vous attendez.
field-name = Saisissez votre prénom (80 caractères au plus).
field-email = Saisissez une adresse e-mail comme nom@example.com.
field-phone = Saisissez un numéro de mobile joignable par SMS, avec l'indicatif du pays (par exemple +33 6 12 34 56 78).
field-channel = Choisissez l'e-mail ou le SMS.
field-language = La langue de la page n'a pas pu être lue.
field-consent = Cochez la case pour accepter un seul message à son retour.
field-body = Le formulaire n'a pas pu être lu. Veuillez réessayer.
error-unknown-item = Ce produit ne peut pas être attendu ici.
error-item-ended = La boutique ne vend plus ce produit : il ne peut plus être attendu ni réservé.
error-opted-out = Cette adresse a demandé à ne pas être contactée ; rien n'a été enregistré.
error-too-many = Beaucoup de personnes s'inscrivent en ce moment. Veuillez patienter quelques minutes et réessayer.
error-busy = La boutique est très sollicitée en ce moment et rien n'a été enregistré. Veuillez réessayer dans un instant.
error-unavailable = Les inscriptions sont momentanément indisponibles et rien n'a été enregistré. Veuillez réessayer sous peu.
error-no-request = Nous n'avons pas trouvé cette inscription. Elle est peut-être déjà terminée.

# Les mots du widget (GET /widget).
widget-heading = Épuisé — soyez prévenu de son retour
widget-coming = Disponible le { $when } — soyez prévenu de sa sortie
widget-contact-both = E-mail ou numéro de mobile
widget-contact-email = E-mail
widget-contact-sms = Numéro de mobile
widget-name = Prénom
widget-consent = Prévenez-moi une fois quand { $product } sera de retour. Je peux me désinscrire à tout moment.
widget-submit = Me prévenir
widget-enter-contact = Veuillez saisir votre adresse e-mail ou votre numéro de mobile.
widget-tick = Veuillez cocher la case pour que nous puissions vous prévenir.
widget-enter-name = Veuillez saisir votre prénom, pour que le message vous salue.
widget-adding = Inscription en cours…
widget-retrying = Beaucoup de personnes s'inscrivent en ce moment — nouvel essai…
widget-position = Vous êtes numéro { $position } dans la file.
widget-check = Nous vous avons envoyé un lien : ouvrez-le pour confirmer, et nous vous préviendrons une fois quand { $product } sera de retour.
widget-told-once = Nous vous préviendrons une fois quand { $product } sera de retour, avec un lien qui vous en réserve un.
widget-left = Vous n'aurez plus de nouvelles de { $product }. Vous pouvez vous réinscrire à tout moment.
widget-from-inbox = Gérez votre place depuis votre boîte de réception : le lien de notre e-mail vous la montre ou vous permet de quitter la liste.
widget-try-again = Cela n'a pas fonctionné — veuillez réessayer.
widget-unreachable = Impossible de joindre la boutique. Vérifiez votre connexion et réessayez.
widget-went-wrong = Un problème est survenu de notre côté. Veuillez réessayer dans une minute.
