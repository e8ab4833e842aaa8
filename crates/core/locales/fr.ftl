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

confirm-subject = Confirmez : prévenez-moi quand { $product } sera de retour chez { $store }
confirm-asked = Quelqu'un, vous nous l'espérons, a demandé à { $store } de prévenir cette adresse quand { $product } sera de nouveau en stock. Confirmez d'ici { $window } pour garder votre place dans la file.
confirm-button = Oui, prévenez-moi
confirm-not-you = Si ce n'était pas vous, ne faites rien : vous n'aurez plus de nouvelles de nous, et cette adresse sera supprimée dans { $window }.
confirm-stop = Ne plus recevoir de messages de { $store }
confirm-sms = { $store } : confirmez d'ici { $window } pour être prévenu du retour de { $product } : { $url } Pas vous ? Ignorez ce message. Répondez STOP pour vous désabonner
