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

confirm-subject = Conferma: avvisami quando { $product } torna da { $store }
confirm-asked = Qualcuno, speriamo tu, ha chiesto a { $store } di avvisare questo indirizzo quando { $product } sarà di nuovo disponibile. Conferma entro { $window } per mantenere il tuo posto in fila.
confirm-button = Sì, avvisami
confirm-not-you = Se non sei stato tu, non fare nulla: non avrai più nostre notizie e questo indirizzo sarà cancellato dopo { $window }.
confirm-stop = Non ricevere più messaggi da { $store }
confirm-sms = { $store }: conferma entro { $window } per sapere quando torna { $product }: { $url } Non sei tu? Ignora. Rispondi STOP per non ricevere più messaggi
