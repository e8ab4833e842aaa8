# restock's words to a shopper, in English. Every catalogue has these
# messages with these variables (checked by `lang` tests); a shop overrides
# any of them under [messages.en] in its settings.

duration-seconds = { $n ->
    [one] { $n } second
   *[other] { $n } seconds
}
duration-minutes = { $n ->
    [one] { $n } minute
   *[other] { $n } minutes
}
duration-hours = { $n ->
    [one] { $n } hour
   *[other] { $n } hours
}
duration-days = { $n ->
    [one] { $n } day
   *[other] { $n } days
}

greeting = Hi { $shopper },
button-fallback = If the button does not work, open this link:
manage-link = See or leave your place

notice-subject = { $product } is back at { $store }
notice-fallback-phrase = Good news: it's back in stock, and we've set one aside for you.
notice-back = { $product } is back in stock at { $store }. Your reserve link holds one for you if you tap it within { $window }.
notice-button = Reserve mine
notice-held-waits = Once held, it waits for you at checkout for a little while.
notice-passes-on = If you don't tap, it passes to the next person waiting.
notice-stop = Stop these messages
# A text: the link and STOP are never cut.
notice-sms = { $store }: { $product } is back. Tap within { $window } to hold one: { $url } Reply STOP to opt out
notice-sms-item = Your item

confirm-subject = Confirm: tell me when { $product } is back at { $store }
confirm-asked = Someone, we hope you, asked { $store } to tell this address when { $product } is back in stock. Confirm within { $window } to keep your place in line.
confirm-button = Yes, tell me
confirm-not-you = If it wasn't you, do nothing: you won't hear from us again, and this address is deleted after { $window }.
confirm-stop = Stop all messages from { $store }
confirm-sms = { $store }: confirm within { $window } to be told when { $product } is back: { $url } Not you? Ignore this. Reply STOP to opt out
