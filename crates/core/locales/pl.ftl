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

confirm-subject = Potwierdź: daj znać, gdy { $product } wróci do { $store }
confirm-asked = Ktoś, mamy nadzieję, że Ty, poprosił { $store } o powiadomienie tego adresu, gdy { $product } wróci do sprzedaży. Potwierdź w ciągu { $window }, aby zachować swoje miejsce w kolejce.
confirm-button = Tak, dajcie znać
confirm-not-you = Jeśli to nie Ty, nic nie rób: nie odezwiemy się więcej, a ten adres zostanie usunięty, jeśli nikt nie potwierdzi w ciągu { $window }.
confirm-stop = Nie chcę wiadomości od { $store }
confirm-sms = { $store }: potwierdź w ciągu { $window }, aby dowiedzieć się, gdy { $product } wróci: { $url } To nie Ty? Zignoruj. Odpisz STOP, aby zrezygnować
