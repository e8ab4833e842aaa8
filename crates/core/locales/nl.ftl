# De woorden van restock aan klanten, in het Nederlands.

duration-seconds = { $n ->
    [one] { $n } seconde
   *[other] { $n } seconden
}
duration-minutes = { $n ->
    [one] { $n } minuut
   *[other] { $n } minuten
}
duration-hours = { $n ->
    [one] { $n } uur
   *[other] { $n } uur
}
duration-days = { $n ->
    [one] { $n } dag
   *[other] { $n } dagen
}

greeting = Hoi { $shopper },
button-fallback = Werkt de knop niet? Open dan deze link:
manage-link = Je plek bekijken of verlaten

notice-subject = { $product } is terug bij { $store }
notice-fallback-phrase = Goed nieuws: het is weer op voorraad, en we hebben er een voor je apart gelegd.
notice-back = { $product } is weer op voorraad bij { $store }. Je reserveringslink houdt er een voor je vast als je erop tikt binnen { $window }.
notice-button = Reserveer de mijne
notice-held-waits = Eenmaal gereserveerd wacht het een tijdje op je bij het afrekenen.
notice-passes-on = Tik je niet, dan gaat het naar de volgende persoon op de wachtlijst.
notice-stop = Geen berichten meer ontvangen
notice-sms = { $store }: { $product } is terug. Tik binnen { $window } om er een te reserveren: { $url } Antwoord STOP om af te melden
notice-sms-item = Je artikel

confirm-subject = Bevestig: laat me weten wanneer { $product } terug is bij { $store }
confirm-asked = Iemand, hopelijk jij, heeft { $store } gevraagd dit adres te laten weten wanneer { $product } weer op voorraad is. Bevestig binnen { $window } om je plek in de rij te houden.
confirm-button = Ja, laat het me weten
confirm-not-you = Was jij het niet? Doe dan niets: je hoort niets meer van ons, en dit adres wordt na { $window } gewist.
confirm-stop = Geen berichten meer van { $store }
confirm-sms = { $store }: bevestig binnen { $window } om te horen wanneer { $product } terug is: { $url } Niet jij? Negeer dit. Antwoord STOP om af te melden
