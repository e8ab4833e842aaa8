# Le parole di restock ai clienti, in italiano.

duration-seconds = { $n ->
    [one] { $n } secondo
   *[other] { $n } secondi
}
duration-minutes = { $n ->
    [one] { $n } minuto
   *[other] { $n } minuti
}
duration-hours = { $n ->
    [one] { $n } ora
   *[other] { $n } ore
}
duration-days = { $n ->
    [one] { $n } giorno
   *[other] { $n } giorni
}
duration-under-minute = meno di un minuto

greeting = Ciao { $shopper },
button-fallback = Se il pulsante non funziona, apri questo link:
manage-link = Vedi o lascia il tuo posto

notice-subject = { $product } è di nuovo da { $store }
notice-fallback-phrase = Buone notizie: è di nuovo disponibile e ne abbiamo messo da parte uno per te.
notice-back = { $product } è di nuovo disponibile da { $store }. Il tuo link di prenotazione te ne tiene uno se lo tocchi entro { $window }.
notice-button = Prenota il mio
notice-held-waits = Una volta prenotato, ti aspetta alla cassa per un po'.
notice-passes-on = Se non lo tocchi, passa alla prossima persona in attesa.
notice-stop = Non ricevere più questi messaggi
notice-sms = { $store }: { $product } è tornato. Tocca entro { $window } per prenotarne uno: { $url } Rispondi STOP per non ricevere più messaggi
notice-sms-item = Il tuo articolo
reminder-subject = Ancora messo da parte per te: { $product } da { $store }
reminder-phrase = Un promemoria: quello che abbiamo messo da parte per te è ancora tuo, per poco.
reminder-back = Il tuo link di prenotazione per { $product } te ne tiene ancora uno se tocchi entro { $window }.
reminder-sms = { $store }: un { $product } è ancora messo da parte per te. Tocca entro { $window } per prenotarlo: { $url } Rispondi STOP per non ricevere più messaggi

confirm-subject = Conferma: avvisami quando { $product } torna da { $store }
confirm-asked = Qualcuno, speriamo tu, ha chiesto a { $store } di avvisare questo indirizzo quando { $product } sarà di nuovo disponibile. Conferma entro { $window } per mantenere il tuo posto in fila.
confirm-button = Sì, avvisami
confirm-not-you = Se non sei stato tu, non fare nulla: non avrai più nostre notizie e questo indirizzo sarà cancellato dopo { $window }.
confirm-together = Questa iscrizione indica anche { $contact }: disiscriversi o prenotare lì chiude anche il tuo posto qui. Se non è tuo, non confermare.
confirm-stop = Non ricevere più messaggi da { $store }
confirm-sms = { $store }: conferma entro { $window } per sapere quando torna { $product }: { $url } Non sei tu? Ignora. Rispondi STOP per non ricevere più messaggi
confirm-sms-together = { $store }: conferma entro { $window } per sapere qui e a { $contact } quando torna { $product }: { $url } Non sei tu? Ignora. Rispondi STOP per non ricevere più messaggi
sms-help = { $store }: SMS quando torna un articolo che hai chiesto, come ti sei iscritto. Rispondi STOP per non ricevere più messaggi

## Le pagine che vedono i clienti.

join-check-title = Controlla la tua casella
join-check = Ci siamo quasi: abbiamo inviato un link di conferma a { $contact }. Aprilo entro { $window } per mantenere il tuo posto (numero { $position } in fila) per { $product }.
join-check-short = Cerca il link di conferma inviato a { $contact } e aprilo entro { $window } per mantenere il tuo posto.
page-on-list-title = Sei in lista
page-position = Sei il numero { $position } in fila per { $product }.
page-position-told-once = Sei il numero { $position } in fila per { $product }. Ti avviseremo una volta, appena torna.
page-on-list = Sei in lista per { $product }.
page-wait-title = Attendi un momento
page-wait = Dalla tua rete sono arrivate molte richieste. Riprova questo link tra { $time }.

page-reserve-title = Prenota il tuo { $product }
page-reserve-back = { $product } è tornato, e uno ti aspetta.
page-reserve-left = Questo link te ne tiene uno ancora per { $time }.
page-reserve-button = Prenotalo e vai alla cassa
page-held-title = È riservato a te
page-held-left = Un { $product } è riservato a te ancora per { $time }.
page-held-number = Il tuo numero di prenotazione è { $hold }. Indicalo alla cassa.
page-checkout-button = Vai alla cassa
page-ended-title = Questo link di prenotazione è scaduto
page-ended = Era valido solo per poco, e l'articolo è passato alla persona successiva.
page-used = Questo link è già stato usato per un acquisto.
page-rejoin-button = Rimettimi in fila
page-sold-out-title = Di nuovo esaurito, ci dispiace
page-sold-out = L'ultimo { $product } è andato un attimo prima del tuo tocco.
page-sold-out-front = Mantieni il tuo posto in cima alla fila e sarai il primo a saperlo quando se ne libera un altro.
page-invalid-title = Non è stato possibile
page-invalid = Questo link non è più valido. Iscriviti di nuovo dalla pagina del prodotto.
page-opted-out-title = Hai chiesto di non ricevere messaggi
page-opted-out = Ci hai chiesto di non contattarti, quindi non ti abbiamo aggiunto.
page-back-title = Sei di nuovo in fila

page-stop-title = Non ricevere più messaggi?
page-stop = Non riceverai più messaggi da noi, per nessun prodotto, a questo indirizzo o numero.
page-stop-button = Non ricevere più messaggi
page-link-unknown-title = Non abbiamo trovato quel link
page-link-unknown = Se continui a ricevere messaggi, rispondi STOP a un SMS o contatta il negozio.
page-stopped-title = Non riceverai più messaggi
page-stopped = Non avrai più nostre notizie.

page-confirm-title = Conferma il tuo posto
page-confirm = Un tocco per confermare che eri tu e mantenere il tuo posto in fila.
page-confirm-button = Sì, avvisami quando torna
page-confirm-ended-title = Questo link di conferma è scaduto
page-confirm-ended = Potrebbe essere scaduto, o l'iscrizione è stata rimossa. Iscriviti di nuovo dalla pagina del prodotto.
page-manage-keep = Conserva questo link: è solo tuo.
page-manage-from-email = Per vedere o lasciare il tuo posto, usa il link in una delle nostre email.

page-manage-unknown-title = Non abbiamo trovato quell'iscrizione
page-manage-unknown = Potrebbe essere già terminata. Puoi iscriverti di nuovo dalla pagina del prodotto.
page-manage-title = Il tuo posto in fila
page-manage-unconfirmed = Sei il numero { $position } in fila per { $product }, appena confermi con il link che ti abbiamo inviato.
page-manage-offered = Un { $product } è messo da parte per te: tocca il link di prenotazione nel messaggio che ti abbiamo inviato.
page-manage-held = Un { $product } è riservato a te: completa l'ordine alla cassa.
page-manage-ended = Questa iscrizione per { $product } è terminata.
page-leave-button = Esci dalla lista
page-left-title = Sei uscito dalla lista
page-left = Non avrai più nostre notizie su questo prodotto.
page-already-ended-title = Già terminata
page-already-ended = Questa iscrizione è già terminata.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Alcuni campi vanno ricontrollati.
field-sku = Indica quale prodotto vuoi attendere.
field-name = Inserisci il tuo nome (fino a 80 caratteri).
field-email = Inserisci un indirizzo email come nome@example.com.
field-phone = Inserisci un numero di cellulare a cui inviare SMS, con il prefisso internazionale (ad esempio +39 312 345 6789).
field-channel = Scegli email o SMS.
field-language = Non è stato possibile leggere la lingua della pagina.
field-consent = Spunta la casella per accettare un solo messaggio quando torna.
field-body = Non è stato possibile leggere il modulo. Riprova.
error-unknown-item = Questo prodotto non si può attendere qui.
error-item-ended = Il negozio non vende più questo prodotto, quindi non si può attendere né prenotare.
error-opted-out = Questo indirizzo ha chiesto di non essere contattato, quindi non è stato salvato nulla.
error-too-many = Tante persone si stanno iscrivendo in questo momento. Attendi qualche minuto e riprova.
error-busy = Il negozio è molto occupato in questo momento e non è stato salvato nulla. Riprova tra un secondo.
error-unavailable = Le iscrizioni non sono disponibili per un momento e non è stato salvato nulla. Riprova a breve.
error-no-request = Non abbiamo trovato questa iscrizione. Forse è già terminata.

# Le parole del widget (GET /widget).
widget-heading = Esaurito: ti avvisiamo quando torna
widget-coming = In arrivo il { $when }: ti avvisiamo quando esce
widget-contact-both = Email o numero di cellulare
widget-contact-email = Email
widget-contact-sms = Numero di cellulare
widget-name = Nome
widget-consent = Avvisatemi una volta quando { $product } torna. Posso annullare in qualsiasi momento.
widget-submit = Avvisami
widget-enter-contact = Inserisci il tuo indirizzo email o il tuo numero di cellulare.
widget-tick = Spunta la casella, così possiamo avvisarti.
widget-enter-name = Inserisci il tuo nome, così il messaggio può salutarti.
widget-adding = Ti stiamo aggiungendo alla lista…
widget-retrying = Tante persone si stanno iscrivendo in questo momento: riproviamo…
widget-position = Sei il numero { $position } in coda.
widget-check = Ti abbiamo inviato un link: aprilo per confermare e ti avviseremo una volta quando { $product } torna.
widget-told-once = Ti avviseremo una volta quando { $product } torna, con un link che te ne mette da parte uno.
widget-left = Non riceverai avvisi su { $product }. Puoi iscriverti di nuovo quando vuoi.
widget-from-inbox = Gestisci il tuo posto dalla tua casella: il link nella nostra email te lo mostra o ti permette di uscire dalla lista.
widget-try-again = Non ha funzionato: riprova.
widget-unreachable = Non siamo riusciti a raggiungere il negozio. Controlla la connessione e riprova.
widget-went-wrong = Qualcosa è andato storto da parte nostra. Riprova tra un minuto.
