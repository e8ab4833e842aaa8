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
duration-under-minute = less than a minute

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
reminder-subject = Still set aside for you: { $product } at { $store }
reminder-phrase = A reminder: the one we set aside for you is still yours, for a little longer.
reminder-back = Your reserve link for { $product } still holds one for you if you tap it within { $window }.
reminder-sms = { $store }: one { $product } is still set aside for you. Tap within { $window } to hold it: { $url } Reply STOP to opt out

confirm-subject = Confirm: tell me when { $product } is back at { $store }
confirm-asked = Someone, we hope you, asked { $store } to tell this address when { $product } is back in stock. Confirm within { $window } to keep your place in line.
confirm-button = Yes, tell me
confirm-not-you = If it wasn't you, do nothing: you won't hear from us again, and this address is deleted after { $window }.
confirm-together = This sign-up also gave { $contact }: opting out or holding an item there ends your place here too. If that isn't yours, don't confirm.
confirm-stop = Stop all messages from { $store }
confirm-sms = { $store }: confirm within { $window } to be told when { $product } is back: { $url } Not you? Ignore this. Reply STOP to opt out
confirm-sms-together = { $store }: confirm within { $window } to be told when { $product } is back, here and at { $contact }: { $url } Not you? Ignore this. Reply STOP to opt out
# The answer to a text that asks for help (HELP).
sms-help = { $store }: texts when an item you asked for is back, as you signed up for. Reply STOP to opt out

## The pages a shopper sees: after joining, and behind each link.
## { $time } is the time left on a link ("14 minutes", "less than a minute").

join-check-title = Check your inbox
join-check = Nearly there: we've sent a confirmation link to { $contact }. Open it within { $window } to keep your place (number { $position } in line) for { $product }.
join-check-short = Check { $contact } for a confirmation link, and open it within { $window } to keep your place.
page-on-list-title = You're on the list
page-position = You're number { $position } in line for { $product }.
page-position-told-once = You're number { $position } in line for { $product }. We'll tell you once, as soon as it's back.
page-on-list = You're on the list for { $product }.
page-wait-title = Please wait a moment
page-wait = There have been a lot of requests from your network. Please try this link again in { $time }.

page-reserve-title = Reserve your { $product }
page-reserve-back = { $product } is back, and one is waiting for you.
page-reserve-left = This link holds one for you and runs out in { $time }.
page-reserve-button = Hold mine and go to checkout
page-held-title = It's held for you
page-held-left = One { $product } is held for you. The hold runs out in { $time }.
page-held-number = Your hold number is { $hold }. Quote it at checkout.
page-checkout-button = Go to checkout
page-ended-title = This reserve link has ended
page-ended = It was only live for a short while, and the unit has passed to the next person.
page-used = This link was already used to buy.
page-rejoin-button = Put me back in the queue
page-sold-out-title = Sold out again, sorry
page-sold-out = The last { $product } went moments before you tapped.
page-sold-out-front = You keep your place at the front of the line, and you'll be told first when another one frees up.
page-invalid-title = We couldn't do that
page-invalid = This link is not valid any more. Please sign up again from the product page.
page-opted-out-title = You opted out
page-opted-out = You asked us not to contact you, so we haven't added you.
page-back-title = You're back in the queue

page-stop-title = Stop messages?
page-stop = You won't get any more messages from us, about any product, on this address or number.
page-stop-button = Stop all messages
page-link-unknown-title = We couldn't find that link
page-link-unknown = If you keep getting messages, reply STOP to a text or contact the shop.
page-stopped-title = You're opted out
page-stopped = You won't hear from us again.

page-confirm-title = Confirm your place
page-confirm = One tap to confirm it was you, and to keep your place in line.
page-confirm-button = Yes, tell me when it's back
page-confirm-ended-title = This confirmation link has ended
page-confirm-ended = It may have run out, or the sign-up was removed. Please sign up again from the product page.
page-manage-keep = Keep this link: it is yours alone.
page-manage-from-email = To see or leave your place, use the link in any email we sent you.

page-manage-unknown-title = We couldn't find that sign-up
page-manage-unknown = It may have ended already. You can sign up again from the product page.
page-manage-title = Your place in line
page-manage-unconfirmed = You're number { $position } in line for { $product }, once you confirm with the link we sent.
page-manage-offered = One { $product } is set aside for you: tap the reserve link in the message we sent.
page-manage-held = One { $product } is held for you: finish your order at checkout.
page-manage-ended = This sign-up for { $product } has ended.
page-leave-button = Leave the list
page-left-title = You've left the list
page-left = You won't hear from us about this product.
page-already-ended-title = Already ended
page-already-ended = This sign-up has already ended.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = Some fields need another look.
field-sku = Say which product to wait for.
field-name = Enter your first name (up to 80 characters).
field-email = Enter an email address like name@example.com.
field-phone = Enter a mobile number we can text, with its country code (like +44 7700 900123).
field-channel = Choose email or text message.
field-language = The page's language could not be read.
field-consent = Tick the box to agree to one message when it is back.
field-body = The form could not be read. Please try again.
error-unknown-item = This product is not one you can wait for here.
error-item-ended = The shop no longer sells this product, so it cannot be waited for or reserved.
error-opted-out = This address asked not to be contacted, so nothing was saved.
error-too-many = Lots of people are signing up right now. Please wait a few minutes and try again.
error-busy = The shop is very busy right now and nothing was saved. Please try again in a second.
error-unavailable = Sign-ups are unavailable for a moment and nothing was saved. Please try again shortly.
error-no-request = We couldn't find that sign-up. It may have ended already.

# The widget's own words (GET /widget): { $product } and { $position } reach
# the widget as {product} and {position}, and it fills them in.
widget-heading = Sold out — get told when it's back
widget-coming = Coming { $when } — get told when it's out
widget-contact-both = Email or mobile number
widget-contact-email = Email
widget-contact-sms = Mobile number
widget-name = First name
widget-consent = Tell me once when { $product } is back. I can opt out any time.
widget-submit = Notify me
widget-enter-contact = Please enter your email address or mobile number.
widget-tick = Please tick the box so we may tell you.
widget-enter-name = Please enter your first name, so the message can greet you.
widget-adding = Adding you to the list…
widget-retrying = Lots of people are signing up right now — trying again…
widget-position = You're number { $position } in line.
widget-check = We've sent you a link: open it to confirm, and we'll tell you once when { $product } is back.
widget-told-once = We'll tell you once when { $product } is back, with a link that holds one for you.
widget-left = You won't hear about { $product }. You can join again any time.
widget-from-inbox = Manage your place from your inbox: the link in our email shows it, or lets you leave the list.
widget-try-again = That didn't work — please try again.
widget-unreachable = We couldn't reach the shop. Check your connection and try again.
widget-went-wrong = Something went wrong on our side. Please try again in a minute.
