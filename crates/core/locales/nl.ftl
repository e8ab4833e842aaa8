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
duration-under-minute = minder dan een minuut

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
reminder-subject = Nog voor je apart gelegd: { $product } bij { $store }
reminder-phrase = Ter herinnering: het exemplaar dat we voor je apart hebben gelegd, is nog even van jou.
reminder-back = Je reserveringslink voor { $product } houdt er nog een voor je vast als je binnen { $window } tikt.
reminder-sms = { $store }: er ligt nog een { $product } voor je apart. Tik binnen { $window } om het te reserveren: { $url } Antwoord STOP om af te melden

confirm-subject = Bevestig: laat me weten wanneer { $product } terug is bij { $store }
confirm-asked = Iemand, hopelijk jij, heeft { $store } gevraagd dit adres te laten weten wanneer { $product } weer op voorraad is. Bevestig binnen { $window } om je plek in de rij te houden.
confirm-button = Ja, laat het me weten
confirm-not-you = Was jij het niet? Doe dan niets: je hoort niets meer van ons, en dit adres wordt na { $window } gewist.
confirm-together = Bij deze aanmelding is ook { $contact } opgegeven: afmelden of reserveren daar beëindigt ook je plek hier. Is dat niet van jou, bevestig dan niet.
confirm-stop = Geen berichten meer van { $store }
confirm-sms = { $store }: bevestig binnen { $window } om te horen wanneer { $product } terug is: { $url } Niet jij? Negeer dit. Antwoord STOP om af te melden
confirm-sms-together = { $store }: bevestig binnen { $window } om hier en op { $contact } te horen wanneer { $product } terug is: { $url } Niet jij? Negeer dit. Antwoord STOP om af te melden
sms-help = { $store }: sms'jes wanneer een artikel waarvoor je je aanmeldde terug is. Antwoord STOP om af te melden

## De pagina's die klanten zien.

join-check-title = Kijk in je inbox
join-check = Bijna klaar: we hebben een bevestigingslink naar { $contact } gestuurd. Open hem binnen { $window } om je plek (nummer { $position } in de rij) voor { $product } te houden.
join-check-short = Zoek de bevestigingslink die naar { $contact } is gestuurd en open hem binnen { $window } om je plek te houden.
page-on-list-title = Je staat op de lijst
page-position = Je bent nummer { $position } in de rij voor { $product }.
page-position-told-once = Je bent nummer { $position } in de rij voor { $product }. We laten het je één keer weten, zodra het terug is.
page-on-list = Je staat op de lijst voor { $product }.
page-wait-title = Een moment geduld
page-wait = Er kwamen veel verzoeken van je netwerk. Probeer deze link over { $time } opnieuw.

page-reserve-title = Reserveer je { $product }
page-reserve-back = { $product } is terug, en er ligt er een voor je klaar.
page-reserve-left = Deze link houdt er nog { $time } een voor je vast.
page-reserve-button = Reserveren en afrekenen
page-held-title = Het ligt voor je klaar
page-held-left = Een { $product } ligt nog { $time } voor je klaar.
page-held-number = Je reserveringsnummer is { $hold }. Noem het bij het afrekenen.
page-checkout-button = Naar afrekenen
page-ended-title = Deze reserveringslink is verlopen
page-ended = Hij was maar kort geldig, en het artikel is naar de volgende persoon gegaan.
page-used = Met deze link is al gekocht.
page-rejoin-button = Zet me terug in de rij
page-sold-out-title = Helaas weer uitverkocht
page-sold-out = De laatste { $product } ging vlak voordat je tikte.
page-sold-out-front = Je houdt je plek vooraan in de rij en hoort het als eerste als er weer een vrijkomt.
page-invalid-title = Dat lukte niet
page-invalid = Deze link is niet meer geldig. Meld je opnieuw aan via de productpagina.
page-opted-out-title = Je hebt je afgemeld
page-opted-out = Je vroeg ons geen contact op te nemen, dus we hebben je niet toegevoegd.
page-back-title = Je staat weer in de rij

page-stop-title = Geen berichten meer?
page-stop = Je krijgt geen berichten meer van ons, over geen enkel product, op dit adres of nummer.
page-stop-button = Geen berichten meer
page-link-unknown-title = We konden die link niet vinden
page-link-unknown = Krijg je nog steeds berichten? Antwoord STOP op een sms of neem contact op met de winkel.
page-stopped-title = Je bent afgemeld
page-stopped = Je hoort niets meer van ons.

page-confirm-title = Bevestig je plek
page-confirm = Eén tik om te bevestigen dat jij het was en je plek in de rij te houden.
page-confirm-button = Ja, laat het me weten als het terug is
page-confirm-ended-title = Deze bevestigingslink is verlopen
page-confirm-ended = Hij is misschien verlopen, of de aanmelding is verwijderd. Meld je opnieuw aan via de productpagina.
page-manage-keep = Bewaar deze link: hij is alleen van jou.
page-manage-from-email = Om je plek te bekijken of te verlaten, gebruik je de link in een van onze e-mails.

page-manage-unknown-title = We konden die aanmelding niet vinden
page-manage-unknown = Misschien is ze al beëindigd. Je kunt je opnieuw aanmelden via de productpagina.
page-manage-title = Je plek in de rij
page-manage-unconfirmed = Je bent nummer { $position } in de rij voor { $product }, zodra je bevestigt met de link die we stuurden.
page-manage-offered = Er ligt een { $product } voor je apart: tik op de reserveringslink in ons bericht.
page-manage-held = Er is een { $product } voor je gereserveerd: rond je bestelling af bij het afrekenen.
page-manage-ended = Deze aanmelding voor { $product } is beëindigd.
page-leave-button = De lijst verlaten
page-left-title = Je hebt de lijst verlaten
page-left = Je hoort niets meer van ons over dit product.
page-already-ended-title = Al beëindigd
page-already-ended = Deze aanmelding is al beëindigd.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Een paar velden moeten nog eens bekeken worden.
field-sku = Geef aan op welk product je wilt wachten.
field-name = Vul je voornaam in (hoogstens 80 tekens).
field-email = Vul een e-mailadres in zoals naam@example.com.
field-phone = Vul een mobiel nummer in waar we een sms naartoe kunnen sturen, met landcode (bijvoorbeeld +31 6 12345678).
field-channel = Kies e-mail of sms.
field-language = De taal van de pagina kon niet gelezen worden.
field-consent = Vink het vakje aan om in te stemmen met één bericht als het terug is.
field-body = Het formulier kon niet gelezen worden. Probeer het opnieuw.
error-unknown-item = Op dit product kun je hier niet wachten.
error-item-ended = De winkel verkoopt dit product niet meer, dus je kunt er niet op wachten of het reserveren.
error-opted-out = Dit adres wil niet benaderd worden, dus er is niets opgeslagen.
error-too-many = Er melden zich nu heel veel mensen aan. Wacht een paar minuten en probeer het opnieuw.
error-busy = De winkel is nu erg druk en er is niets opgeslagen. Probeer het zo opnieuw.
error-unavailable = Aanmelden kan even niet en er is niets opgeslagen. Probeer het straks opnieuw.
error-no-request = We konden die aanmelding niet vinden. Misschien is ze al afgelopen.

# De woorden van de widget (GET /widget).
widget-heading = Uitverkocht — krijg bericht als het terug is
widget-coming = Verschijnt op { $when } — krijg bericht zodra het er is
widget-contact-both = E-mail of mobiel nummer
widget-contact-email = E-mail
widget-contact-sms = Mobiel nummer
widget-name = Voornaam
widget-consent = Laat het me één keer weten als { $product } terug is. Ik kan me altijd afmelden.
widget-submit = Houd me op de hoogte
widget-enter-contact = Vul je e-mailadres of mobiele nummer in.
widget-tick = Vink het vakje aan, zodat we je mogen laten weten.
widget-enter-name = Vul je voornaam in, zodat het bericht je kan begroeten.
widget-adding = We zetten je op de lijst…
widget-retrying = Er melden zich nu heel veel mensen aan — we proberen het opnieuw…
widget-position = Je bent nummer { $position } in de rij.
widget-check = We hebben je een link gestuurd: open hem om te bevestigen, en we laten het je één keer weten als { $product } terug is.
widget-told-once = We laten het je één keer weten als { $product } terug is, met een link die er een voor je vasthoudt.
widget-left = Je hoort niets meer over { $product }. Je kunt je altijd opnieuw aanmelden.
widget-from-inbox = Beheer je plek vanuit je inbox: de link in onze e-mail laat hem zien, of haalt je van de lijst.
widget-try-again = Dat lukte niet — probeer het opnieuw.
widget-unreachable = We konden de winkel niet bereiken. Controleer je verbinding en probeer het opnieuw.
widget-went-wrong = Er ging bij ons iets mis. Probeer het over een minuut opnieuw.
