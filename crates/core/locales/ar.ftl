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
duration-under-minute = أقل من دقيقة

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
reminder-subject = ما زال محجوزًا لك: { $product } لدى { $store }
reminder-phrase = تذكير: القطعة التي حجزناها لك ما زالت لك لبعض الوقت.
reminder-back = رابط الحجز لـ { $product } ما زال يحجز لك قطعة إذا نقرت خلال { $window }.
reminder-sms = { $store }: ما زالت قطعة من { $product } محجوزة لك. انقر خلال { $window } لحجزها: { $url } أرسل STOP للإلغاء

confirm-subject = تأكيد: أبلغني عندما يعود { $product } لدى { $store }
confirm-asked = طلب شخص ما، نأمل أن يكون أنت، من { $store } إبلاغ هذا العنوان عندما يعود { $product } إلى المخزون. أكّد خلال { $window } للاحتفاظ بمكانك في الطابور.
confirm-button = نعم، أبلغني
confirm-not-you = إذا لم تكن أنت، فلا تفعل شيئًا: لن تسمع منا مجددًا، وسيُحذف هذا العنوان بعد { $window }.
confirm-together = ذكر هذا التسجيل أيضًا { $contact }: إلغاء الاشتراك أو الحجز هناك يُنهي مكانك هنا أيضًا. إن لم يكن لك، فلا تؤكد.
confirm-stop = إيقاف جميع الرسائل من { $store }
confirm-sms = { $store }: أكّد خلال { $window } لتعرف متى يعود { $product }: { $url } أرسل STOP للإلغاء
confirm-sms-together = { $store }: أكّد خلال { $window } لتعرف هنا وعلى { $contact } متى يعود { $product }: { $url } أرسل STOP للإلغاء
sms-help = { $store }: رسائل عند عودة منتج طلبته، كما اشتركت. أرسل STOP للإلغاء

## الصفحات التي يراها العملاء.

join-check-title = تحقق من بريدك الوارد
join-check = اقتربنا: أرسلنا رابط تأكيد إلى { $contact }. افتحه خلال { $window } للاحتفاظ بمكانك (رقم { $position } في الطابور) لـ { $product }.
join-check-short = افتح رابط التأكيد المرسل إلى { $contact } خلال { $window } للاحتفاظ بمكانك.
page-on-list-title = أنت في القائمة
page-position = أنت رقم { $position } في الطابور لـ { $product }.
page-position-told-once = أنت رقم { $position } في الطابور لـ { $product }. سنبلغك مرة واحدة فور عودته.
page-on-list = أنت في قائمة { $product }.
page-wait-title = لحظة من فضلك
page-wait = وصلتنا طلبات كثيرة من شبكتك. حاول فتح هذا الرابط مرة أخرى بعد { $time }.

page-reserve-title = احجز { $product }
page-reserve-back = عاد { $product }، وهناك قطعة بانتظارك.
page-reserve-left = يبقى هذا الرابط محتفظًا بقطعة لك لمدة { $time }.
page-reserve-button = احجزها وانتقل إلى الدفع
page-held-title = القطعة محجوزة لك
page-held-left = قطعة من { $product } محجوزة لك لمدة { $time }.
page-held-number = رقم حجزك { $hold }. اذكره عند الدفع.
page-checkout-button = انتقل إلى الدفع
page-ended-title = انتهت صلاحية رابط الحجز هذا
page-ended = كان صالحًا لفترة قصيرة فقط، وانتقلت القطعة إلى الشخص التالي.
page-used = استُخدم هذا الرابط للشراء من قبل.
page-rejoin-button = أعدني إلى الطابور
page-sold-out-title = نفد مجددًا، نعتذر
page-sold-out = نفدت آخر قطعة من { $product } قبل نقرتك بلحظات.
page-sold-out-front = تحتفظ بمكانك في مقدمة الطابور، وستكون أول من يعلم عندما تتوفر قطعة أخرى.
page-invalid-title = تعذّر ذلك
page-invalid = لم يعد هذا الرابط صالحًا. يُرجى التسجيل مجددًا من صفحة المنتج.
page-opted-out-title = ألغيت الاشتراك
page-opted-out = طلبت منا عدم التواصل معك، لذا لم نضفك.
page-back-title = عدت إلى الطابور

page-stop-title = إيقاف الرسائل؟
page-stop = لن تصلك منا أي رسائل أخرى، عن أي منتج، على هذا العنوان أو الرقم.
page-stop-button = إيقاف جميع الرسائل
page-link-unknown-title = لم نعثر على هذا الرابط
page-link-unknown = إذا استمرت الرسائل في الوصول، أرسل STOP ردًا على رسالة نصية أو تواصل مع المتجر.
page-stopped-title = تم إلغاء اشتراكك
page-stopped = لن تسمع منا مجددًا.

page-confirm-title = أكّد مكانك
page-confirm = نقرة واحدة لتأكيد أنك صاحب الطلب وللاحتفاظ بمكانك في الطابور.
page-confirm-button = نعم، أبلغني عند عودته
page-confirm-ended-title = انتهت صلاحية رابط التأكيد هذا
page-confirm-ended = ربما انتهت صلاحيته، أو أُزيل التسجيل. يُرجى التسجيل مجددًا من صفحة المنتج.
page-manage-keep = احتفظ بهذا الرابط: إنه لك وحدك.
page-manage-from-email = لعرض مكانك أو مغادرته، استخدم الرابط في أي رسالة بريد أرسلناها إليك.

page-manage-unknown-title = لم نعثر على هذا التسجيل
page-manage-unknown = ربما انتهى بالفعل. يمكنك التسجيل مجددًا من صفحة المنتج.
page-manage-title = مكانك في الطابور
page-manage-unconfirmed = أنت رقم { $position } في الطابور لـ { $product } بمجرد أن تؤكد بالرابط الذي أرسلناه.
page-manage-offered = قطعة من { $product } محجوزة لك: انقر على رابط الحجز في الرسالة التي أرسلناها.
page-manage-held = قطعة من { $product } محجوزة لك: أكمل طلبك عند الدفع.
page-manage-ended = انتهى هذا التسجيل لـ { $product }.
page-leave-button = مغادرة القائمة
page-left-title = غادرت القائمة
page-left = لن تسمع منا مجددًا بخصوص هذا المنتج.
page-already-ended-title = انتهى بالفعل
page-already-ended = انتهى هذا التسجيل بالفعل.

# What capture answers the widget and the API when it cannot take a sign-up.
error-fields = بعض الحقول تحتاج إلى مراجعة.
field-sku = حدّد المنتج الذي تريد انتظاره.
field-name = أدخل اسمك الأول (حتى 80 حرفًا).
field-email = أدخل بريدًا إلكترونيًا مثل name@example.com.
field-phone = أدخل رقم جوال يمكننا مراسلته، مع رمز الدولة (مثل ‎+971 50 123 4567).
field-channel = اختر البريد الإلكتروني أو الرسائل النصية.
field-language = تعذّرت قراءة لغة الصفحة.
field-consent = ضع علامة في المربع لتوافق على رسالة واحدة عند توفره.
field-body = تعذّرت قراءة النموذج. يُرجى المحاولة مرة أخرى.
error-unknown-item = لا يمكن انتظار هذا المنتج هنا.
error-item-ended = لم يعد المتجر يبيع هذا المنتج، لذا لا يمكن انتظاره أو حجزه.
error-opted-out = طلب هذا العنوان عدم التواصل معه، لذلك لم يُحفظ أي شيء.
error-too-many = يسجّل الكثيرون الآن. يُرجى الانتظار بضع دقائق ثم المحاولة مرة أخرى.
error-busy = المتجر مشغول جدًا الآن ولم يُحفظ أي شيء. يُرجى المحاولة بعد لحظة.
error-unavailable = التسجيل غير متاح للحظات ولم يُحفظ أي شيء. يُرجى المحاولة بعد قليل.
error-no-request = لم نجد هذا التسجيل. ربما انتهى بالفعل.

# كلمات الأداة (GET /widget).
widget-heading = نفدت الكمية — نخبرك عند توفره
widget-coming = يصدر في { $when } — سنخبرك عند صدوره
widget-contact-both = البريد الإلكتروني أو رقم الجوال
widget-contact-email = البريد الإلكتروني
widget-contact-sms = رقم الجوال
widget-name = الاسم الأول
widget-consent = أخبرني مرة واحدة عندما يتوفر { $product } من جديد. يمكنني إلغاء الاشتراك في أي وقت.
widget-submit = أخبرني
widget-enter-contact = يُرجى إدخال بريدك الإلكتروني أو رقم جوالك.
widget-tick = يُرجى وضع علامة في المربع لنتمكن من إخبارك.
widget-enter-name = يُرجى إدخال اسمك الأول لتحيتك في الرسالة.
widget-adding = نضيفك إلى القائمة…
widget-retrying = يسجّل الكثيرون الآن — نحاول مرة أخرى…
widget-position = أنت رقم { $position } في الطابور.
widget-check = أرسلنا إليك رابطًا: افتحه للتأكيد، وسنخبرك مرة واحدة عندما يتوفر { $product } من جديد.
widget-told-once = سنخبرك مرة واحدة عندما يتوفر { $product } من جديد، مع رابط يحجز لك قطعة.
widget-left = لن تصلك أخبار عن { $product }. يمكنك الانضمام مجددًا في أي وقت.
widget-from-inbox = أدِر مكانك من بريدك الوارد: الرابط في رسالتنا يعرضه أو يتيح لك مغادرة القائمة.
widget-try-again = لم ينجح ذلك — يُرجى المحاولة مرة أخرى.
widget-unreachable = تعذّر الوصول إلى المتجر. تحقّق من اتصالك وحاول مرة أخرى.
widget-went-wrong = حدث خطأ من جهتنا. يُرجى المحاولة بعد دقيقة.
