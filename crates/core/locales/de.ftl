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
duration-under-minute = weniger als eine Minute

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
reminder-subject = Noch für dich zurückgelegt: { $product } bei { $store }
reminder-phrase = Zur Erinnerung: Das Exemplar, das wir für dich zurückgelegt haben, ist noch eine Weile deins.
reminder-back = Dein Reservierungslink für { $product } hält noch eins für dich, wenn du innerhalb von { $window } tippst.
reminder-sms = { $store }: Ein { $product } ist noch für dich zurückgelegt. Tippe innerhalb von { $window }, um es zu reservieren: { $url } Antworte STOP zum Abmelden

confirm-subject = Bestätigen: Sag mir Bescheid, wenn { $product } bei { $store } wieder da ist
confirm-asked = Jemand, hoffentlich du, hat { $store } gebeten, diese Adresse zu benachrichtigen, wenn { $product } wieder vorrätig ist. Bestätige innerhalb von { $window }, um deinen Platz in der Warteliste zu behalten.
confirm-button = Ja, sag mir Bescheid
confirm-not-you = Warst du das nicht, tu nichts: Du hörst nichts mehr von uns, und diese Adresse wird nach { $window } gelöscht.
confirm-together = Bei dieser Anmeldung wurde auch { $contact } angegeben: Eine Abmeldung oder Reservierung dort beendet auch deinen Platz hier. Gehört das nicht dir, bestätige nicht.
confirm-stop = Alle Nachrichten von { $store } abbestellen
confirm-sms = { $store }: Bestätige innerhalb von { $window }, um zu erfahren, wann { $product } wieder da ist: { $url } Nicht du? Ignoriere dies. Antworte STOP zum Abmelden
confirm-sms-together = { $store }: Bestätige innerhalb von { $window }, um hier und unter { $contact } zu erfahren, wann { $product } wieder da ist: { $url } Nicht du? Ignoriere dies. Antworte STOP zum Abmelden
sms-help = { $store }: SMS, wenn ein Artikel wieder da ist, für den du dich angemeldet hast. Antworte STOP zum Abmelden

## Die Seiten, die Kundinnen und Kunden sehen.

join-check-title = Schau in dein Postfach
join-check = Fast geschafft: Wir haben einen Bestätigungslink an { $contact } geschickt. Öffne ihn innerhalb von { $window }, um deinen Platz (Nummer { $position } in der Warteliste) für { $product } zu behalten.
join-check-short = Schau in { $contact } nach dem Bestätigungslink und öffne ihn innerhalb von { $window }, um deinen Platz zu behalten.
page-on-list-title = Du stehst auf der Liste
page-position = Du bist Nummer { $position } in der Warteliste für { $product }.
page-position-told-once = Du bist Nummer { $position } in der Warteliste für { $product }. Wir sagen dir einmal Bescheid, sobald es wieder da ist.
page-on-list = Du stehst auf der Liste für { $product }.
page-wait-title = Einen Moment bitte
page-wait = Aus deinem Netzwerk kamen sehr viele Anfragen. Bitte versuche diesen Link in { $time } noch einmal.

page-reserve-title = Reserviere dein { $product }
page-reserve-back = { $product } ist wieder da, und eins wartet auf dich.
page-reserve-left = Dieser Link hält eins für dich – noch { $time }.
page-reserve-button = Reservieren und zur Kasse
page-held-title = Es ist für dich reserviert
page-held-left = Ein { $product } ist für dich reserviert – noch { $time }.
page-held-number = Deine Reservierungsnummer ist { $hold }. Gib sie an der Kasse an.
page-checkout-button = Zur Kasse
page-ended-title = Dieser Reservierungslink ist abgelaufen
page-ended = Er war nur kurz gültig, und der Artikel ist an die nächste Person gegangen.
page-used = Mit diesem Link wurde bereits gekauft.
page-rejoin-button = Stell mich wieder in die Warteliste
page-sold-out-title = Leider wieder ausverkauft
page-sold-out = Das letzte { $product } ging kurz vor deinem Tippen weg.
page-sold-out-front = Du behältst deinen Platz vorne in der Warteliste und erfährst als Erste oder Erster, wenn wieder eins frei wird.
page-invalid-title = Das hat nicht geklappt
page-invalid = Dieser Link ist nicht mehr gültig. Bitte melde dich auf der Produktseite neu an.
page-opted-out-title = Du hast dich abgemeldet
page-opted-out = Du hast uns gebeten, dich nicht zu kontaktieren, deshalb haben wir dich nicht eingetragen.
page-back-title = Du bist wieder in der Warteliste

page-stop-title = Nachrichten abbestellen?
page-stop = Du bekommst keine Nachrichten mehr von uns, zu keinem Produkt, an diese Adresse oder Nummer.
page-stop-button = Alle Nachrichten abbestellen
page-link-unknown-title = Diesen Link konnten wir nicht finden
page-link-unknown = Wenn du weiter Nachrichten bekommst, antworte STOP auf eine SMS oder wende dich an den Shop.
page-stopped-title = Du bist abgemeldet
page-stopped = Du hörst nichts mehr von uns.

page-confirm-title = Bestätige deinen Platz
page-confirm = Ein Tippen bestätigt, dass du es warst, und hält deinen Platz in der Warteliste.
page-confirm-button = Ja, sag mir Bescheid, wenn es wieder da ist
page-confirm-ended-title = Dieser Bestätigungslink ist abgelaufen
page-confirm-ended = Vielleicht ist er abgelaufen, oder die Anmeldung wurde entfernt. Bitte melde dich auf der Produktseite neu an.
page-manage-keep = Bewahre diesen Link auf: Er gehört nur dir.
page-manage-from-email = Um deinen Platz anzusehen oder zu verlassen, nutze den Link in einer unserer E-Mails.

page-manage-unknown-title = Diese Anmeldung konnten wir nicht finden
page-manage-unknown = Vielleicht ist sie schon beendet. Du kannst dich auf der Produktseite neu anmelden.
page-manage-title = Dein Platz in der Warteliste
page-manage-unconfirmed = Du bist Nummer { $position } in der Warteliste für { $product }, sobald du mit dem Link bestätigst, den wir dir geschickt haben.
page-manage-offered = Ein { $product } ist für dich zurückgelegt: Tippe auf den Reservierungslink in unserer Nachricht.
page-manage-held = Ein { $product } ist für dich reserviert: Schließe deine Bestellung an der Kasse ab.
page-manage-ended = Diese Anmeldung für { $product } ist beendet.
page-leave-button = Warteliste verlassen
page-left-title = Du hast die Warteliste verlassen
page-left = Du hörst zu diesem Produkt nichts mehr von uns.
page-already-ended-title = Bereits beendet
page-already-ended = Diese Anmeldung ist bereits beendet.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Bitte prüfe einige Angaben noch einmal.
field-sku = Gib an, auf welches Produkt du warten möchtest.
field-name = Gib deinen Vornamen ein (bis zu 80 Zeichen).
field-email = Gib eine E-Mail-Adresse wie name@example.com ein.
field-phone = Gib eine Handynummer mit Ländervorwahl ein, an die wir eine SMS senden können (z. B. +49 151 23456789).
field-channel = Wähle E-Mail oder SMS.
field-language = Die Sprache der Seite konnte nicht gelesen werden.
field-consent = Setze das Häkchen, damit wir dir einmal Bescheid geben dürfen, wenn es wieder da ist.
field-body = Das Formular konnte nicht gelesen werden. Bitte versuche es noch einmal.
error-unknown-item = Auf dieses Produkt kannst du hier nicht warten.
error-item-ended = Der Shop verkauft dieses Produkt nicht mehr, daher kannst du nicht darauf warten oder es reservieren.
error-opted-out = Diese Adresse möchte nicht kontaktiert werden, deshalb wurde nichts gespeichert.
error-too-many = Gerade melden sich sehr viele an. Bitte warte ein paar Minuten und versuche es dann noch einmal.
error-busy = Der Shop ist gerade sehr ausgelastet, es wurde nichts gespeichert. Bitte versuche es gleich noch einmal.
error-unavailable = Anmeldungen sind kurz nicht möglich, es wurde nichts gespeichert. Bitte versuche es gleich noch einmal.
error-no-request = Diese Anmeldung haben wir nicht gefunden. Vielleicht ist sie schon beendet.

# Die Wörter des Widgets (GET /widget).
widget-heading = Ausverkauft – lass dich benachrichtigen, wenn es wieder da ist
widget-coming = Erscheint am { $when } – lass dich benachrichtigen, sobald es da ist
widget-contact-both = E-Mail oder Handynummer
widget-contact-email = E-Mail
widget-contact-sms = Handynummer
widget-name = Vorname
widget-consent = Sag mir einmal Bescheid, wenn { $product } wieder da ist. Ich kann mich jederzeit abmelden.
widget-submit = Benachrichtige mich
widget-enter-contact = Bitte gib deine E-Mail-Adresse oder Handynummer ein.
widget-tick = Bitte setze das Häkchen, damit wir dir Bescheid geben dürfen.
widget-enter-name = Bitte gib deinen Vornamen ein, damit wir dich begrüßen können.
widget-adding = Wir tragen dich ein…
widget-retrying = Gerade melden sich sehr viele an – wir versuchen es noch einmal…
widget-position = Du bist Nummer { $position } in der Warteschlange.
widget-check = Wir haben dir einen Link geschickt: Öffne ihn zum Bestätigen, dann sagen wir dir einmal Bescheid, wenn { $product } wieder da ist.
widget-told-once = Wir sagen dir einmal Bescheid, wenn { $product } wieder da ist, mit einem Link, der eins für dich zurücklegt.
widget-left = Du hörst nichts mehr zu { $product }. Du kannst dich jederzeit wieder eintragen.
widget-from-inbox = Verwalte deinen Platz über dein Postfach: Der Link in unserer E-Mail zeigt ihn dir oder trägt dich aus.
widget-try-again = Das hat nicht geklappt – bitte versuche es noch einmal.
widget-unreachable = Wir konnten den Shop nicht erreichen. Prüfe deine Verbindung und versuche es noch einmal.
widget-went-wrong = Bei uns ist etwas schiefgelaufen. Bitte versuche es in einer Minute noch einmal.
