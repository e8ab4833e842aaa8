# كلمات restock للعملاء، بالعربية.
# المدد تأتي دائمًا بعد «خلال» أو «بعد»: المثنى مجرور (دقيقتين).

duration-seconds = { $n ->
    [one] ثانية واحدة
    [two] ثانيتين
    [few] { $n } ثوانٍ
   *[other] { $n } ثانية
}
duration-minutes = { $n ->
    [one] دقيقة واحدة
    [two] دقيقتين
    [few] { $n } دقائق
   *[other] { $n } دقيقة
}
duration-hours = { $n ->
    [one] ساعة واحدة
    [two] ساعتين
    [few] { $n } ساعات
   *[other] { $n } ساعة
}
duration-days = { $n ->
    [one] يوم واحد
    [two] يومين
    [few] { $n } أيام
    [many] { $n } يومًا
   *[other] { $n } يوم
}

greeting = مرحبًا { $shopper }،
button-fallback = إذا لم يعمل الزر، افتح هذا الرابط:
manage-link = عرض مكانك أو مغادرته

notice-subject = { $product } متوفر من جديد لدى { $store }
notice-fallback-phrase = خبر سار: عاد المنتج إلى المخزون، وقد حجزنا قطعة لك.
notice-back = عاد { $product } إلى المخزون لدى { $store }. يحجز لك رابط الحجز قطعة واحدة إذا نقرت عليه خلال { $window }.
notice-button = احجز قطعتي
notice-held-waits = بعد الحجز، تنتظرك القطعة عند الدفع لبعض الوقت.
notice-passes-on = إذا لم تنقر، تنتقل إلى الشخص التالي في الانتظار.
notice-stop = إيقاف هذه الرسائل
notice-sms = { $store }: عاد { $product }. احجز خلال { $window }: { $url } أرسل STOP للإلغاء
notice-sms-item = منتجك

confirm-subject = تأكيد: أبلغني عندما يعود { $product } لدى { $store }
confirm-asked = طلب شخص ما، نأمل أن يكون أنت، من { $store } إبلاغ هذا العنوان عندما يعود { $product } إلى المخزون. أكّد خلال { $window } للاحتفاظ بمكانك في الطابور.
confirm-button = نعم، أبلغني
confirm-not-you = إذا لم تكن أنت، فلا تفعل شيئًا: لن تسمع منا مجددًا، وسيُحذف هذا العنوان بعد { $window }.
confirm-stop = إيقاف جميع الرسائل من { $store }
confirm-sms = { $store }: أكّد خلال { $window } لتعرف متى يعود { $product }: { $url } أرسل STOP للإلغاء
