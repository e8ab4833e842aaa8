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
duration-under-minute = menos de un minuto

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
reminder-subject = Aún reservado para ti: { $product } en { $store }
reminder-phrase = Un recordatorio: el que apartamos para ti sigue siendo tuyo un poco más.
reminder-back = Tu enlace de reserva de { $product } aún te guarda uno si lo tocas en menos de { $window }.
reminder-sms = { $store }: aún tienes un { $product } apartado. Toca en menos de { $window } para reservarlo: { $url } Responde STOP para darte de baja

confirm-subject = Confirma: avísame cuando { $product } vuelva a { $store }
confirm-asked = Alguien, esperamos que tú, pidió a { $store } que avisara a esta dirección cuando { $product } vuelva a estar disponible. Confirma en menos de { $window } para mantener tu lugar en la cola.
confirm-button = Sí, avísame
confirm-not-you = Si no fuiste tú, no hagas nada: no volverás a saber de nosotros y esta dirección se borrará en { $window }.
confirm-together = Este registro también indicó { $contact }: darse de baja o reservar allí también termina tu lugar aquí. Si no es tuyo, no confirmes.
confirm-stop = Dejar de recibir mensajes de { $store }
confirm-sms = { $store }: confirma en menos de { $window } para saber cuándo vuelve { $product }: { $url } ¿No fuiste tú? Ignóralo. Responde STOP para darte de baja
confirm-sms-together = { $store }: confirma en menos de { $window } para saber aquí y en { $contact } cuándo vuelve { $product }: { $url } ¿No fuiste tú? Ignóralo. Responde STOP para darte de baja
sms-help = { $store }: mensajes cuando vuelve un artículo que pediste, como te registraste. Responde STOP para darte de baja

## Las páginas que ven los clientes.

join-check-title = Revisa tu bandeja de entrada
join-check = Casi listo: hemos enviado un enlace de confirmación a { $contact }. Ábrelo en menos de { $window } para mantener tu lugar (número { $position } en la cola) para { $product }.
join-check-short = Busca el enlace de confirmación enviado a { $contact } y ábrelo en menos de { $window } para mantener tu lugar.
page-on-list-title = Estás en la lista
page-position = Eres el número { $position } en la cola para { $product }.
page-position-told-once = Eres el número { $position } en la cola para { $product }. Te avisaremos una vez, en cuanto vuelva.
page-on-list = Estás en la lista para { $product }.
page-wait-title = Espera un momento
page-wait = Ha habido muchas solicitudes desde tu red. Vuelve a probar este enlace dentro de { $time }.

page-reserve-title = Reserva tu { $product }
page-reserve-back = { $product } ha vuelto, y hay uno esperándote.
page-reserve-left = Este enlace te guarda uno y caduca en { $time }.
page-reserve-button = Reservarlo e ir a pagar
page-held-title = Está reservado para ti
page-held-left = Un { $product } está reservado para ti; la reserva caduca en { $time }.
page-held-number = Tu número de reserva es { $hold }. Indícalo al pagar.
page-checkout-button = Ir a pagar
page-ended-title = Este enlace de reserva ha caducado
page-ended = Solo era válido un rato, y la unidad ha pasado a la siguiente persona.
page-used = Este enlace ya se usó para comprar.
page-rejoin-button = Vuelve a ponerme en la cola
page-sold-out-title = Agotado otra vez, lo sentimos
page-sold-out = El último { $product } se fue justo antes de que tocaras.
page-sold-out-front = Mantienes tu lugar al principio de la cola y serás el primero en saber cuándo quede otro libre.
page-invalid-title = No hemos podido hacerlo
page-invalid = Este enlace ya no es válido. Vuelve a apuntarte desde la página del producto.
page-opted-out-title = Te diste de baja
page-opted-out = Nos pediste que no te contactáramos, así que no te hemos añadido.
page-back-title = Vuelves a estar en la cola

page-stop-title = ¿Dejar de recibir mensajes?
page-stop = No recibirás más mensajes nuestros, de ningún producto, en esta dirección o número.
page-stop-button = Dejar de recibir mensajes
page-link-unknown-title = No hemos encontrado ese enlace
page-link-unknown = Si sigues recibiendo mensajes, responde STOP a un SMS o contacta con la tienda.
page-stopped-title = Te has dado de baja
page-stopped = No volverás a saber de nosotros.

page-confirm-title = Confirma tu lugar
page-confirm = Un toque para confirmar que fuiste tú y mantener tu lugar en la cola.
page-confirm-button = Sí, avísame cuando vuelva
page-confirm-ended-title = Este enlace de confirmación ha caducado
page-confirm-ended = Puede que haya caducado o que se haya eliminado la inscripción. Vuelve a apuntarte desde la página del producto.
page-manage-keep = Guarda este enlace: es solo tuyo.
page-manage-from-email = Para ver o dejar tu lugar, usa el enlace de cualquiera de nuestros correos.

page-manage-unknown-title = No hemos encontrado esa inscripción
page-manage-unknown = Puede que ya haya terminado. Puedes volver a apuntarte desde la página del producto.
page-manage-title = Tu lugar en la cola
page-manage-unconfirmed = Eres el número { $position } en la cola para { $product }, en cuanto confirmes con el enlace que te enviamos.
page-manage-offered = Hay un { $product } apartado para ti: toca el enlace de reserva del mensaje que te enviamos.
page-manage-held = Hay un { $product } reservado para ti: termina tu pedido al pagar.
page-manage-ended = Esta inscripción para { $product } ha terminado.
page-leave-button = Salir de la lista
page-left-title = Has salido de la lista
page-left = No volverás a saber de nosotros sobre este producto.
page-already-ended-title = Ya terminada
page-already-ended = Esta inscripción ya ha terminado.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Algunos campos necesitan otra revisión.
field-sku = Indica qué producto quieres esperar.
field-name = Escribe tu nombre (hasta 80 caracteres).
field-email = Escribe un correo electrónico como nombre@example.com.
field-phone = Escribe un número de móvil al que podamos enviar SMS, con el prefijo del país (por ejemplo +34 612 345 678).
field-channel = Elige correo electrónico o SMS.
field-language = No se pudo leer el idioma de la página.
field-consent = Marca la casilla para aceptar un solo mensaje cuando vuelva.
field-body = No se pudo leer el formulario. Inténtalo de nuevo.
error-unknown-item = Este producto no se puede esperar aquí.
error-item-ended = La tienda ya no vende este producto, así que no se puede esperar ni reservar.
error-opted-out = Esta dirección pidió no ser contactada, así que no se guardó nada.
error-too-many = Mucha gente se está apuntando ahora mismo. Espera unos minutos e inténtalo de nuevo.
error-busy = La tienda está muy ocupada ahora mismo y no se guardó nada. Inténtalo de nuevo en un segundo.
error-unavailable = Las inscripciones no están disponibles por un momento y no se guardó nada. Inténtalo de nuevo en breve.
error-no-request = No encontramos esa inscripción. Puede que ya haya terminado.

# Las palabras del widget (GET /widget).
widget-heading = Agotado: te avisamos cuando vuelva
widget-coming = Llega el { $when }: te avisamos cuando salga
widget-contact-both = Correo electrónico o número de móvil
widget-contact-email = Correo electrónico
widget-contact-sms = Número de móvil
widget-name = Nombre
widget-consent = Avísame una vez cuando { $product } vuelva. Puedo darme de baja en cualquier momento.
widget-submit = Avísame
widget-enter-contact = Escribe tu correo electrónico o tu número de móvil.
widget-tick = Marca la casilla para que podamos avisarte.
widget-enter-name = Escribe tu nombre, para que el mensaje pueda saludarte.
widget-adding = Apuntándote en la lista…
widget-retrying = Mucha gente se está apuntando ahora mismo; lo intentamos de nuevo…
widget-position = Eres el número { $position } en la cola.
widget-check = Te hemos enviado un enlace: ábrelo para confirmar y te avisaremos una vez cuando { $product } vuelva.
widget-told-once = Te avisaremos una vez cuando { $product } vuelva, con un enlace que te reserva uno.
widget-left = No recibirás avisos sobre { $product }. Puedes volver a apuntarte cuando quieras.
widget-from-inbox = Gestiona tu plaza desde tu bandeja de entrada: el enlace de nuestro correo te la muestra o te permite salir de la lista.
widget-try-again = No ha funcionado; inténtalo de nuevo.
widget-unreachable = No pudimos contactar con la tienda. Revisa tu conexión e inténtalo de nuevo.
widget-went-wrong = Algo ha fallado por nuestra parte. Inténtalo de nuevo en un minuto.
