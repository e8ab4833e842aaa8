# As palavras do restock aos clientes, em português.

duration-seconds = { $n ->
    [one] { $n } segundo
   *[other] { $n } segundos
}
duration-minutes = { $n ->
    [one] { $n } minuto
   *[other] { $n } minutos
}
duration-hours = { $n ->
    [one] { $n } hora
   *[other] { $n } horas
}
duration-days = { $n ->
    [one] { $n } dia
   *[other] { $n } dias
}

greeting = Olá, { $shopper },
button-fallback = Se o botão não funcionar, abra este link:
manage-link = Ver ou deixar o seu lugar

notice-subject = { $product } voltou à { $store }
notice-fallback-phrase = Boa notícia: voltou ao estoque e separamos uma unidade para você.
notice-back = { $product } está de volta ao estoque na { $store }. O seu link de reserva guarda uma unidade para você se tocar nele dentro de { $window }.
notice-button = Reservar a minha
notice-held-waits = Depois de reservada, ela espera por você no checkout durante algum tempo.
notice-passes-on = Se não tocar, ela passa para a próxima pessoa na fila.
notice-stop = Deixar de receber estas mensagens
notice-sms = { $store }: { $product } voltou. Toque dentro de { $window } para reservar: { $url } Responda STOP para cancelar
notice-sms-item = O seu item

confirm-subject = Confirme: avise-me quando { $product } voltar à { $store }
confirm-asked = Alguém, esperamos que você, pediu à { $store } para avisar este endereço quando { $product } voltar ao estoque. Confirme dentro de { $window } para manter o seu lugar na fila.
confirm-button = Sim, avise-me
confirm-not-you = Se não foi você, não faça nada: não terá mais notícias nossas, e este endereço será apagado após { $window }.
confirm-stop = Deixar de receber mensagens da { $store }
confirm-sms = { $store }: confirme dentro de { $window } para saber quando { $product } voltar: { $url } Não foi você? Ignore. Responda STOP para cancelar
