# restock がお客様に伝える言葉（日本語）。

duration-seconds = { $n }秒
duration-minutes = { $n }分
duration-hours = { $n }時間
duration-days = { $n }日
duration-under-minute = 1分未満

greeting = { $shopper } 様
button-fallback = ボタンが機能しない場合は、こちらのリンクを開いてください：
manage-link = 順番の確認・登録解除

notice-subject = { $product }が{ $store }に再入荷しました
notice-fallback-phrase = 朗報です。再入荷しましたので、お客様の分をお取り置きしています。
notice-back = { $product }が{ $store }に再入荷しました。{ $window }以内に予約リンクをタップすると、1点お取り置きします。
notice-button = 予約する
notice-held-waits = 予約後、しばらくの間チェックアウトでお待ちしています。
notice-passes-on = タップされない場合は、次にお待ちの方にお回しします。
notice-stop = 配信を停止する
notice-sms = { $store }：{ $product }が再入荷。{ $window }以内にタップで確保：{ $url } 停止はSTOPと返信
notice-sms-item = ご希望の商品
reminder-subject = まだお取り置き中：{ $store }の{ $product }
reminder-phrase = リマインダー：お取り置きした商品は、もう少しの間お客様のものです。
reminder-back = { $product }の確保リンクは、{ $window }以内にタップすればまだ1点お取り置きできます。
reminder-sms = { $store }：{ $product }をまだお取り置き中。{ $window }以内にタップで確保：{ $url } 停止はSTOPと返信

confirm-subject = 確認：{ $product }が{ $store }に再入荷したらお知らせします
confirm-asked = どなたか（きっとお客様ご本人）が、{ $product }の再入荷時にこのアドレスへ知らせるよう{ $store }に依頼しました。順番を確保するには、{ $window }以内に確認してください。
confirm-button = はい、知らせてください
confirm-not-you = お心当たりがない場合は、何もしないでください。今後ご連絡することはなく、このアドレスは{ $window }後に削除されます。
confirm-together = この登録には{ $contact }も含まれています。そちらで配信停止または確保すると、こちらの順番も終了します。お心当たりがなければ確認しないでください。
confirm-stop = { $store }からのすべての配信を停止する
confirm-sms = { $store }：{ $product }の再入荷通知を受け取るには{ $window }以内に確認：{ $url } 心当たりがなければ無視してください。停止はSTOPと返信
confirm-sms-together = { $store }：{ $product }の再入荷通知をここと{ $contact }で受け取るには{ $window }以内に確認：{ $url } 心当たりがなければ無視してください。停止はSTOPと返信
sms-help = { $store }：ご登録いただいた商品の再入荷をお知らせします。停止はSTOPと返信

## お客様が見るページ。

join-check-title = 受信箱をご確認ください
join-check = あと少しです：確認リンクを{ $contact }に送りました。{ $product }の順番（{ $position }番目）を確保するには、{ $window }以内に開いてください。
join-check-short = { $contact }に届いた確認リンクを、{ $window }以内に開いて順番を確保してください。
page-on-list-title = リストに登録されました
page-position = { $product }の順番は{ $position }番目です。
page-position-told-once = { $product }の順番は{ $position }番目です。再入荷したら一度だけお知らせします。
page-on-list = { $product }のリストに登録されています。
page-wait-title = 少々お待ちください
page-wait = お使いのネットワークから多数のリクエストがありました。{ $time }後にもう一度このリンクをお試しください。

page-reserve-title = { $product }を予約する
page-reserve-back = { $product }が再入荷し、お客様の分をご用意しています。
page-reserve-left = このリンクは残り{ $time }、1点を確保しています。
page-reserve-button = 確保してチェックアウトへ
page-held-title = お取り置き中です
page-held-left = { $product }を1点、残り{ $time }お取り置きしています。
page-held-number = お取り置き番号は{ $hold }です。チェックアウトでお伝えください。
page-checkout-button = チェックアウトへ
page-ended-title = この予約リンクは期限切れです
page-ended = 有効期間は短く、商品は次の方に回りました。
page-used = このリンクはすでに購入に使われました。
page-rejoin-button = もう一度順番待ちに入る
page-sold-out-title = 申し訳ありません、再び売り切れです
page-sold-out = 最後の{ $product }は、タップの直前に売れてしまいました。
page-sold-out-front = 順番は先頭のまま、次に空きが出たら最初にお知らせします。
page-invalid-title = 処理できませんでした
page-invalid = このリンクはもう有効ではありません。商品ページからもう一度登録してください。
page-opted-out-title = 配信停止済みです
page-opted-out = ご連絡しないようご依頼いただいているため、登録しませんでした。
page-back-title = 順番待ちに戻りました

page-stop-title = 配信を停止しますか？
page-stop = このアドレスまたは番号には、どの商品についても今後メッセージをお送りしません。
page-stop-button = すべての配信を停止する
page-link-unknown-title = リンクが見つかりませんでした
page-link-unknown = メッセージが届き続ける場合は、SMSにSTOPと返信するか、ショップにお問い合わせください。
page-stopped-title = 配信を停止しました
page-stopped = 今後ご連絡することはありません。

page-confirm-title = 順番を確定する
page-confirm = ご本人であることを確認し、順番を確保するにはタップしてください。
page-confirm-button = はい、再入荷したら知らせてください
page-confirm-ended-title = この確認リンクは期限切れです
page-confirm-ended = 期限が切れたか、登録が削除された可能性があります。商品ページからもう一度登録してください。
page-manage-keep = このリンクは大切に保管してください。お客様専用です。
page-manage-from-email = 順番の確認・登録解除は、お送りしたメールのリンクからどうぞ。

page-manage-unknown-title = 登録が見つかりませんでした
page-manage-unknown = すでに終了している可能性があります。商品ページからもう一度登録できます。
page-manage-title = あなたの順番
page-manage-unconfirmed = お送りしたリンクで確認すると、{ $product }の順番は{ $position }番目になります。
page-manage-offered = { $product }をお取り置きしています。お送りしたメッセージの予約リンクをタップしてください。
page-manage-held = { $product }を確保しています。チェックアウトでご注文を完了してください。
page-manage-ended = { $product }の登録は終了しました。
page-leave-button = リストから外れる
page-left-title = リストから外れました
page-left = この商品について今後ご連絡することはありません。
page-already-ended-title = すでに終了しています
page-already-ended = この登録はすでに終了しています。

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = いくつかの項目をご確認ください。
field-sku = お待ちになる商品をお選びください。
field-name = お名前を入力してください（80文字まで）。
field-email = name@example.com のようなメールアドレスを入力してください。
field-phone = SMSを受け取れる携帯電話番号を国番号付きで入力してください（例：+81 90 1234 5678）。
field-channel = メールかSMSをお選びください。
field-language = ページの言語を読み取れませんでした。
field-consent = 再入荷時に一度だけお知らせすることに同意する場合は、チェックを入れてください。
field-body = フォームを読み取れませんでした。もう一度お試しください。
error-unknown-item = この商品はこちらで再入荷待ちできません。
error-item-ended = この商品はお店での販売が終了したため、再入荷待ちや予約はできません。
error-opted-out = このアドレスは連絡を希望していないため、何も保存されていません。
error-too-many = ただいま多くの方が登録しています。数分待ってからもう一度お試しください。
error-busy = ただいまショップが大変混み合っており、何も保存されていません。すぐにもう一度お試しください。
error-unavailable = 一時的に登録できず、何も保存されていません。しばらくしてからもう一度お試しください。
error-no-request = その登録は見つかりませんでした。すでに終了している可能性があります。

# ウィジェットの文言（GET /widget）。
widget-heading = 売り切れ — 再入荷をお知らせします
widget-coming = { $when }発売予定 — 発売時にお知らせします
widget-contact-both = メールアドレスまたは携帯電話番号
widget-contact-email = メールアドレス
widget-contact-sms = 携帯電話番号
widget-name = お名前
widget-consent = { $product }が再入荷したら一度だけ知らせてください。いつでも配信を停止できます。
widget-submit = 再入荷を知らせる
widget-enter-contact = メールアドレスまたは携帯電話番号を入力してください。
widget-tick = お知らせできるよう、チェックを入れてください。
widget-enter-name = メッセージでお呼びできるよう、お名前を入力してください。
widget-adding = リストに登録しています…
widget-retrying = ただいま多くの方が登録しています — もう一度試しています…
widget-position = あなたの順番は{ $position }番目です。
widget-check = 確認用のリンクをお送りしました。開いて確認していただくと、{ $product }が再入荷したときに一度だけお知らせします。
widget-told-once = { $product }が再入荷したら一度だけ、お取り置き用のリンクを添えてお知らせします。
widget-left = { $product }についてのお知らせは届きません。いつでも再登録できます。
widget-from-inbox = 受信箱から順番を管理できます。メールのリンクから順番の確認やリストからの登録解除ができます。
widget-try-again = うまくいきませんでした。もう一度お試しください。
widget-unreachable = ショップに接続できませんでした。接続を確認して、もう一度お試しください。
widget-went-wrong = こちらで問題が発生しました。1分後にもう一度お試しください。
