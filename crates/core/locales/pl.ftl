# Słowa restock do klientów, po polsku.
# Czas zawsze po „w ciągu”: dopełniacz („w ciągu 2 minut”, „1 dnia”).

duration-seconds = { $n ->
    [one] { $n } sekundy
   *[other] { $n } sekund
}
duration-minutes = { $n ->
    [one] { $n } minuty
   *[other] { $n } minut
}
duration-hours = { $n ->
    [one] { $n } godziny
   *[other] { $n } godzin
}
duration-days = { $n ->
    [one] { $n } dnia
   *[other] { $n } dni
}
duration-under-minute = niecałej minuty

greeting = Cześć { $shopper },
button-fallback = Jeśli przycisk nie działa, otwórz ten link:
manage-link = Zobacz lub opuść swoje miejsce

notice-subject = { $product } znów jest w { $store }
notice-fallback-phrase = Dobra wiadomość: produkt wrócił do sprzedaży i odłożyliśmy jedną sztukę dla Ciebie.
notice-back = { $product } jest znów dostępny w { $store }. Twój link rezerwacji zatrzyma jedną sztukę dla Ciebie, jeśli klikniesz go w ciągu { $window }.
notice-button = Rezerwuję
notice-held-waits = Po rezerwacji czeka na Ciebie przy kasie przez krótki czas.
notice-passes-on = Jeśli nie klikniesz, przejdzie do następnej osoby w kolejce.
notice-stop = Nie chcę więcej wiadomości
notice-sms = { $store }: { $product } wrócił. Kliknij w ciągu { $window }, aby zarezerwować: { $url } Odpisz STOP, aby zrezygnować
notice-sms-item = Twój produkt
reminder-subject = Wciąż odłożone dla Ciebie: { $product } w { $store }
reminder-phrase = Przypomnienie: egzemplarz odłożony dla Ciebie jest jeszcze przez chwilę Twój.
reminder-back = Twój link rezerwacji { $product } wciąż trzyma jeden dla Ciebie, jeśli klikniesz w ciągu { $window }.
reminder-sms = { $store }: { $product } wciąż czeka odłożony dla Ciebie. Kliknij w ciągu { $window }, aby zarezerwować: { $url } Odpisz STOP, aby zrezygnować

confirm-subject = Potwierdź: daj znać, gdy { $product } wróci do { $store }
confirm-asked = Ktoś, mamy nadzieję, że Ty, poprosił { $store } o powiadomienie tego adresu, gdy { $product } wróci do sprzedaży. Potwierdź w ciągu { $window }, aby zachować swoje miejsce w kolejce.
confirm-button = Tak, dajcie znać
confirm-not-you = Jeśli to nie Ty, nic nie rób: nie odezwiemy się więcej, a ten adres zostanie usunięty, jeśli nikt nie potwierdzi w ciągu { $window }.
confirm-together = To zgłoszenie podaje też { $contact }: rezygnacja lub rezerwacja tam kończy też Twoje miejsce tutaj. Jeśli to nie Twoje, nie potwierdzaj.
confirm-stop = Nie chcę wiadomości od { $store }
confirm-sms = { $store }: potwierdź w ciągu { $window }, aby dowiedzieć się, gdy { $product } wróci: { $url } To nie Ty? Zignoruj. Odpisz STOP, aby zrezygnować
confirm-sms-together = { $store }: potwierdź w ciągu { $window }, aby dowiedzieć się tutaj i pod { $contact }, gdy { $product } wróci: { $url } To nie Ty? Zignoruj. Odpisz STOP, aby zrezygnować
sms-help = { $store }: SMS-y, gdy wróci produkt, o który prosiłeś. Odpisz STOP, aby zrezygnować

## Strony, które widzą klienci. { $time } stoi po „do upływu” / „po upływie”: dopełniacz.

join-check-title = Sprawdź skrzynkę
join-check = Prawie gotowe: wysłaliśmy link potwierdzający na { $contact }. Otwórz go w ciągu { $window }, aby zachować swoje miejsce (numer { $position } w kolejce) po { $product }.
join-check-short = Znajdź link potwierdzający wysłany na { $contact } i otwórz go w ciągu { $window }, aby zachować swoje miejsce.
page-on-list-title = Jesteś na liście
page-position = Jesteś numerem { $position } w kolejce po { $product }.
page-position-told-once = Jesteś numerem { $position } w kolejce po { $product }. Powiadomimy Cię raz, gdy tylko wróci.
page-on-list = Jesteś na liście po { $product }.
page-wait-title = Chwileczkę
page-wait = Z Twojej sieci przyszło bardzo dużo zapytań. Spróbuj otworzyć ten link ponownie po upływie { $time }.

page-reserve-title = Zarezerwuj { $product }
page-reserve-back = { $product } wrócił i jedna sztuka czeka na Ciebie.
page-reserve-left = Ten link trzyma dla Ciebie sztukę do upływu { $time }.
page-reserve-button = Rezerwuję i przechodzę do kasy
page-held-title = Zarezerwowane dla Ciebie
page-held-left = { $product } jest zarezerwowany dla Ciebie do upływu { $time }.
page-held-number = Twój numer rezerwacji to { $hold }. Podaj go przy kasie.
page-checkout-button = Przejdź do kasy
page-ended-title = Ten link rezerwacji wygasł
page-ended = Był ważny tylko przez chwilę, a produkt przeszedł do następnej osoby.
page-used = Ten link został już użyty do zakupu.
page-rejoin-button = Wróć mnie do kolejki
page-sold-out-title = Przykro nam, znów wyprzedane
page-sold-out = Ostatni { $product } zniknął tuż przed Twoim kliknięciem.
page-sold-out-front = Zachowujesz miejsce na początku kolejki i dowiesz się pierwszy, gdy zwolni się kolejna sztuka.
page-invalid-title = Nie udało się
page-invalid = Ten link nie jest już ważny. Zapisz się ponownie na stronie produktu.
page-opted-out-title = Zrezygnowałeś z wiadomości
page-opted-out = Poprosiłeś, abyśmy się z Tobą nie kontaktowali, więc Cię nie dodaliśmy.
page-back-title = Wracasz do kolejki

page-stop-title = Zrezygnować z wiadomości?
page-stop = Nie dostaniesz od nas więcej wiadomości o żadnym produkcie na ten adres ani numer.
page-stop-button = Rezygnuję ze wszystkich wiadomości
page-link-unknown-title = Nie znaleźliśmy tego linku
page-link-unknown = Jeśli nadal dostajesz wiadomości, odpisz STOP na SMS albo skontaktuj się ze sklepem.
page-stopped-title = Zrezygnowano z wiadomości
page-stopped = Nie odezwiemy się więcej.

page-confirm-title = Potwierdź swoje miejsce
page-confirm = Jedno kliknięcie potwierdzi, że to Ty, i zachowa Twoje miejsce w kolejce.
page-confirm-button = Tak, dajcie znać, gdy wróci
page-confirm-ended-title = Ten link potwierdzający wygasł
page-confirm-ended = Mógł wygasnąć albo zapis został usunięty. Zapisz się ponownie na stronie produktu.
page-manage-keep = Zachowaj ten link: należy tylko do Ciebie.
page-manage-from-email = Aby zobaczyć lub opuścić swoje miejsce, użyj linku z dowolnego naszego e-maila.

page-manage-unknown-title = Nie znaleźliśmy tego zapisu
page-manage-unknown = Mógł się już zakończyć. Możesz zapisać się ponownie na stronie produktu.
page-manage-title = Twoje miejsce w kolejce
page-manage-unconfirmed = Jesteś numerem { $position } w kolejce po { $product }, gdy tylko potwierdzisz linkiem, który wysłaliśmy.
page-manage-offered = { $product } jest dla Ciebie odłożony: kliknij link rezerwacji z wiadomości, którą wysłaliśmy.
page-manage-held = { $product } jest dla Ciebie zarezerwowany: dokończ zamówienie w kasie.
page-manage-ended = Ten zapis po { $product } się zakończył.
page-leave-button = Opuść listę
page-left-title = Opuściłeś listę
page-left = Nie odezwiemy się więcej w sprawie tego produktu.
page-already-ended-title = Już zakończony
page-already-ended = Ten zapis już się zakończył.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Niektóre pola wymagają poprawy.
field-sku = Wskaż, na który produkt chcesz czekać.
field-name = Wpisz swoje imię (do 80 znaków).
field-email = Wpisz adres e-mail, np. imie@example.com.
field-phone = Wpisz numer komórkowy, na który możemy wysłać SMS, z numerem kierunkowym kraju (np. +48 512 345 678).
field-channel = Wybierz e-mail lub SMS.
field-language = Nie udało się odczytać języka strony.
field-consent = Zaznacz pole, aby zgodzić się na jedną wiadomość, gdy produkt wróci.
field-body = Nie udało się odczytać formularza. Spróbuj ponownie.
error-unknown-item = Na ten produkt nie można tu czekać.
error-item-ended = Sklep nie sprzedaje już tego produktu, więc nie można na niego czekać ani go zarezerwować.
error-opted-out = Ten adres prosił, by się z nim nie kontaktować, więc niczego nie zapisano.
error-too-many = Właśnie zapisuje się bardzo wiele osób. Odczekaj kilka minut i spróbuj ponownie.
error-busy = Sklep jest teraz bardzo obciążony i niczego nie zapisano. Spróbuj ponownie za chwilę.
error-unavailable = Zapisy są chwilowo niedostępne i niczego nie zapisano. Spróbuj ponownie za moment.
error-no-request = Nie znaleźliśmy tego zapisu. Być może już się zakończył.

# Słowa widżetu (GET /widget).
widget-heading = Wyprzedane — daj znać, gdy wróci
widget-coming = Premiera: { $when } — damy Ci znać, gdy będzie dostępny
widget-contact-both = E-mail lub numer komórkowy
widget-contact-email = E-mail
widget-contact-sms = Numer komórkowy
widget-name = Imię
widget-consent = Powiadom mnie raz, gdy { $product } wróci. Mogę zrezygnować w każdej chwili.
widget-submit = Powiadom mnie
widget-enter-contact = Wpisz swój adres e-mail lub numer komórkowy.
widget-tick = Zaznacz pole, abyśmy mogli Cię powiadomić.
widget-enter-name = Wpisz swoje imię, aby wiadomość mogła Cię powitać.
widget-adding = Dopisujemy Cię do listy…
widget-retrying = Właśnie zapisuje się bardzo wiele osób — próbujemy ponownie…
widget-position = Jesteś numerem { $position } w kolejce.
widget-check = Wysłaliśmy Ci link: otwórz go, aby potwierdzić, a powiadomimy Cię raz, gdy { $product } wróci.
widget-told-once = Powiadomimy Cię raz, gdy { $product } wróci, z linkiem, który zarezerwuje jedną sztukę dla Ciebie.
widget-left = Nie dostaniesz już wiadomości o { $product }. W każdej chwili możesz zapisać się ponownie.
widget-from-inbox = Zarządzaj swoim miejscem ze skrzynki: link w naszym e-mailu je pokazuje lub pozwala opuścić listę.
widget-try-again = Nie udało się — spróbuj ponownie.
widget-unreachable = Nie udało się połączyć ze sklepem. Sprawdź połączenie i spróbuj ponownie.
widget-went-wrong = Coś poszło nie tak po naszej stronie. Spróbuj ponownie za minutę.
