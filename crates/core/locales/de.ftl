# restocks Worte an Kundinnen und Kunden, auf Deutsch.
# Dauern stehen immer nach „innerhalb von“ oder „nach“: Dativ („2 Tagen“).

duration-seconds = { $n ->
    [one] { $n } Sekunde
   *[other] { $n } Sekunden
}
duration-minutes = { $n ->
    [one] { $n } Minute
   *[other] { $n } Minuten
}
duration-hours = { $n ->
    [one] { $n } Stunde
   *[other] { $n } Stunden
}
duration-days = { $n ->
    [one] { $n } Tag
   *[other] { $n } Tagen
}

greeting = Hallo { $shopper },
button-fallback = Falls der Button nicht funktioniert, öffne diesen Link:
manage-link = Deinen Platz ansehen oder verlassen

notice-subject = { $product } ist wieder da bei { $store }
notice-fallback-phrase = Gute Nachricht: Es ist wieder vorrätig, und wir haben eins für dich zurückgelegt.
notice-back = { $product } ist bei { $store } wieder vorrätig. Dein Reservierungslink hält eins für dich, wenn du ihn innerhalb von { $window } antippst.
notice-button = Jetzt reservieren
notice-held-waits = Einmal reserviert, wartet es eine Weile an der Kasse auf dich.
notice-passes-on = Tippst du nicht, geht es an die nächste Person in der Warteliste.
notice-stop = Diese Nachrichten abbestellen
notice-sms = { $store }: { $product } ist wieder da. Tippe innerhalb von { $window }, um eins zu reservieren: { $url } Antworte STOP zum Abmelden
notice-sms-item = Dein Artikel

confirm-subject = Bestätigen: Sag mir Bescheid, wenn { $product } bei { $store } wieder da ist
confirm-asked = Jemand, hoffentlich du, hat { $store } gebeten, diese Adresse zu benachrichtigen, wenn { $product } wieder vorrätig ist. Bestätige innerhalb von { $window }, um deinen Platz in der Warteliste zu behalten.
confirm-button = Ja, sag mir Bescheid
confirm-not-you = Warst du das nicht, tu nichts: Du hörst nichts mehr von uns, und diese Adresse wird nach { $window } gelöscht.
confirm-stop = Alle Nachrichten von { $store } abbestellen
confirm-sms = { $store }: Bestätige innerhalb von { $window }, um zu erfahren, wann { $product } wieder da ist: { $url } Nicht du? Ignoriere dies. Antworte STOP zum Abmelden
