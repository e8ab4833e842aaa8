# Las palabras de restock a los clientes, en español.

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
    [one] { $n } día
   *[other] { $n } días
}

greeting = Hola, { $shopper }:
button-fallback = Si el botón no funciona, abre este enlace:
manage-link = Ver o dejar tu lugar

notice-subject = { $product } vuelve a estar en { $store }
notice-fallback-phrase = Buenas noticias: vuelve a haber existencias y te hemos reservado una unidad.
notice-back = { $product } vuelve a estar disponible en { $store }. Tu enlace de reserva te guarda una unidad si lo tocas en menos de { $window }.
notice-button = Reservar la mía
notice-held-waits = Una vez reservada, te espera en el pago durante un rato.
notice-passes-on = Si no lo tocas, pasa a la siguiente persona en espera.
notice-stop = Dejar de recibir estos mensajes
notice-sms = { $store }: { $product } ha vuelto. Toca en menos de { $window } para reservar uno: { $url } Responde STOP para darte de baja
notice-sms-item = Tu artículo

confirm-subject = Confirma: avísame cuando { $product } vuelva a { $store }
confirm-asked = Alguien, esperamos que tú, pidió a { $store } que avisara a esta dirección cuando { $product } vuelva a estar disponible. Confirma en menos de { $window } para mantener tu lugar en la cola.
confirm-button = Sí, avísame
confirm-not-you = Si no fuiste tú, no hagas nada: no volverás a saber de nosotros y esta dirección se borrará en { $window }.
confirm-stop = Dejar de recibir mensajes de { $store }
confirm-sms = { $store }: confirma en menos de { $window } para saber cuándo vuelve { $product }: { $url } ¿No fuiste tú? Ignóralo. Responde STOP para darte de baja
