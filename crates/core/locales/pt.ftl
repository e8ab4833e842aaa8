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
duration-under-minute = menos de um minuto

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
reminder-subject = Ainda reservado para si: { $product } na { $store }
reminder-phrase = Um lembrete: o que guardámos para si ainda é seu, por mais um pouco.
reminder-back = O seu link de reserva de { $product } ainda lhe guarda um se tocar dentro de { $window }.
reminder-sms = { $store }: ainda tem um { $product } guardado. Toque dentro de { $window } para o reservar: { $url } Responda STOP para cancelar

confirm-subject = Confirme: avise-me quando { $product } voltar à { $store }
confirm-asked = Alguém, esperamos que você, pediu à { $store } para avisar este endereço quando { $product } voltar ao estoque. Confirme dentro de { $window } para manter o seu lugar na fila.
confirm-button = Sim, avise-me
confirm-not-you = Se não foi você, não faça nada: não terá mais notícias nossas, e este endereço será apagado após { $window }.
confirm-together = Esta inscrição também indicou { $contact }: cancelar ou reservar por lá também encerra o seu lugar aqui. Se não for seu, não confirme.
confirm-stop = Deixar de receber mensagens da { $store }
confirm-sms = { $store }: confirme dentro de { $window } para saber quando { $product } voltar: { $url } Não foi você? Ignore. Responda STOP para cancelar
confirm-sms-together = { $store }: confirme dentro de { $window } para saber aqui e em { $contact } quando { $product } voltar: { $url } Não foi você? Ignore. Responda STOP para cancelar
sms-help = { $store }: mensagens quando voltar um item que pediu, como se inscreveu. Responda STOP para cancelar

## As páginas que os clientes veem.

join-check-title = Confira sua caixa de entrada
join-check = Quase lá: enviamos um link de confirmação para { $contact }. Abra-o dentro de { $window } para manter o seu lugar (número { $position } na fila) para { $product }.
join-check-short = Procure o link de confirmação enviado para { $contact } e abra-o dentro de { $window } para manter o seu lugar.
page-on-list-title = Você está na lista
page-position = Você é o número { $position } na fila para { $product }.
page-position-told-once = Você é o número { $position } na fila para { $product }. Avisaremos uma vez, assim que voltar.
page-on-list = Você está na lista para { $product }.
page-wait-title = Aguarde um momento
page-wait = Houve muitos pedidos da sua rede. Tente este link novamente daqui a { $time }.

page-reserve-title = Reserve o seu { $product }
page-reserve-back = { $product } voltou, e há um esperando por você.
page-reserve-left = Este link guarda um para você e expira em { $time }.
page-reserve-button = Reservar e ir para o checkout
page-held-title = Está reservado para você
page-held-left = Um { $product } está reservado para você; a reserva expira em { $time }.
page-held-number = O seu número de reserva é { $hold }. Informe-o no checkout.
page-checkout-button = Ir para o checkout
page-ended-title = Este link de reserva expirou
page-ended = Ele valia só por pouco tempo, e a unidade passou para a próxima pessoa.
page-used = Este link já foi usado numa compra.
page-rejoin-button = Colocar-me de volta na fila
page-sold-out-title = Esgotado de novo, desculpe
page-sold-out = O último { $product } saiu pouco antes do seu toque.
page-sold-out-front = Você mantém o seu lugar no início da fila e será o primeiro a saber quando outro ficar livre.
page-invalid-title = Não foi possível
page-invalid = Este link já não é válido. Inscreva-se de novo na página do produto.
page-opted-out-title = Você cancelou as mensagens
page-opted-out = Você pediu que não o contactássemos, por isso não o adicionamos.
page-back-title = Você está de volta na fila

page-stop-title = Deixar de receber mensagens?
page-stop = Você não receberá mais mensagens nossas, de nenhum produto, neste endereço ou número.
page-stop-button = Deixar de receber mensagens
page-link-unknown-title = Não encontramos esse link
page-link-unknown = Se continuar a receber mensagens, responda STOP a um SMS ou contacte a loja.
page-stopped-title = Mensagens canceladas
page-stopped = Não terá mais notícias nossas.

page-confirm-title = Confirme o seu lugar
page-confirm = Um toque para confirmar que foi você e manter o seu lugar na fila.
page-confirm-button = Sim, avise-me quando voltar
page-confirm-ended-title = Este link de confirmação expirou
page-confirm-ended = Pode ter expirado, ou a inscrição foi removida. Inscreva-se de novo na página do produto.
page-manage-keep = Guarde este link: é só seu.
page-manage-from-email = Para ver ou deixar o seu lugar, use o link de qualquer e-mail nosso.

page-manage-unknown-title = Não encontramos essa inscrição
page-manage-unknown = Talvez já tenha terminado. Pode inscrever-se de novo na página do produto.
page-manage-title = O seu lugar na fila
page-manage-unconfirmed = Você é o número { $position } na fila para { $product }, assim que confirmar com o link que enviamos.
page-manage-offered = Há um { $product } separado para você: toque no link de reserva da mensagem que enviamos.
page-manage-held = Há um { $product } reservado para você: conclua o pedido no checkout.
page-manage-ended = Esta inscrição para { $product } terminou.
page-leave-button = Sair da lista
page-left-title = Você saiu da lista
page-left = Não terá mais notícias nossas sobre este produto.
page-already-ended-title = Já terminada
page-already-ended = Esta inscrição já terminou.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Alguns campos precisam de outra olhada.
field-sku = Diga qual produto você quer esperar.
field-name = Digite seu nome (até 80 caracteres).
field-email = Digite um e-mail como nome@example.com.
field-phone = Digite um celular que receba SMS, com o código do país (por exemplo +55 11 91234 5678).
field-channel = Escolha e-mail ou SMS.
field-language = Não foi possível ler o idioma da página.
field-consent = Marque a caixa para aceitar uma única mensagem quando ele voltar.
field-body = Não foi possível ler o formulário. Tente de novo.
error-unknown-item = Este produto não pode ser aguardado aqui.
error-item-ended = A loja já não vende este produto, por isso não pode ser aguardado nem reservado.
error-opted-out = Este endereço pediu para não ser contatado, então nada foi salvo.
error-too-many = Muita gente está se inscrevendo agora. Espere alguns minutos e tente de novo.
error-busy = A loja está muito movimentada agora e nada foi salvo. Tente de novo em um segundo.
error-unavailable = As inscrições estão indisponíveis por um momento e nada foi salvo. Tente de novo em breve.
error-no-request = Não encontramos essa inscrição. Talvez ela já tenha terminado.

# As palavras do widget (GET /widget).
widget-heading = Esgotado — receba um aviso quando voltar
widget-coming = Chega em { $when } — receba um aviso no lançamento
widget-contact-both = E-mail ou celular
widget-contact-email = E-mail
widget-contact-sms = Celular
widget-name = Nome
widget-consent = Me avise uma vez quando { $product } voltar. Posso cancelar quando quiser.
widget-submit = Avise-me
widget-enter-contact = Digite seu e-mail ou celular.
widget-tick = Marque a caixa para que possamos avisar você.
widget-enter-name = Digite seu nome, para que a mensagem possa cumprimentar você.
widget-adding = Colocando você na lista…
widget-retrying = Muita gente está se inscrevendo agora — tentando de novo…
widget-position = Você é o número { $position } na fila.
widget-check = Enviamos um link para você: abra-o para confirmar, e avisaremos uma vez quando { $product } voltar.
widget-told-once = Avisaremos uma vez quando { $product } voltar, com um link que reserva um para você.
widget-left = Você não terá notícias sobre { $product }. Pode se inscrever de novo quando quiser.
widget-from-inbox = Gerencie seu lugar pela sua caixa de entrada: o link do nosso e-mail mostra o lugar ou permite sair da lista.
widget-try-again = Não deu certo — tente de novo.
widget-unreachable = Não conseguimos falar com a loja. Verifique sua conexão e tente de novo.
widget-went-wrong = Algo deu errado do nosso lado. Tente de novo em um minuto.
