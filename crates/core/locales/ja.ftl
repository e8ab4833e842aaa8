# restock がお客様に伝える言葉（日本語）。

duration-seconds = { $n }秒
duration-minutes = { $n }分
duration-hours = { $n }時間
duration-days = { $n }日

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

confirm-subject = 確認：{ $product }が{ $store }に再入荷したらお知らせします
confirm-asked = どなたか（きっとお客様ご本人）が、{ $product }の再入荷時にこのアドレスへ知らせるよう{ $store }に依頼しました。順番を確保するには、{ $window }以内に確認してください。
confirm-button = はい、知らせてください
confirm-not-you = お心当たりがない場合は、何もしないでください。今後ご連絡することはなく、このアドレスは{ $window }後に削除されます。
confirm-stop = { $store }からのすべての配信を停止する
confirm-sms = { $store }：{ $product }の再入荷通知を受け取るには{ $window }以内に確認：{ $url } 心当たりがなければ無視してください。停止はSTOPと返信
