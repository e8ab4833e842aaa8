<?php
// Runs the restock WordPress plugin's hooks against stand-ins for the
// WordPress and WooCommerce functions it calls, each with the signature and
// behaviour their documentation gives (hooks with priorities and accepted
// arguments, `$wp_filter` of WP_Hook objects, the WooCommerce session, the
// order CRUD API's meta, products and variations).
//
//   php harness.php check PLUGIN          every hook, asserted; "ok" lines
//   php harness.php order PLUGIN HOLD     a Checkout block (Store API) order
//                                         after a reserve link with HOLD: its
//                                         meta_data as the REST API gives it
//   php harness.php page PLUGIN           the "Add to Cart + Options" block
//                                         for a tee in S, M, L (M in stock),
//                                         as rendered with the plugin on
//
// Exits non-zero, saying what, when an assertion fails.

namespace Automattic\WooCommerce\Utilities {
    class FeaturesUtil {
        public static array $declared = [];
        public static function declare_compatibility($feature, $file, $positive = true) {
            self::$declared[] = [$feature, $file, $positive];
            return true;
        }
    }
}

namespace Automattic\WooCommerce\Internal\StockNotifications\Frontend {
    // WooCommerce's own back-in-stock form: renders from two hooks at 30.
    class ProductPageIntegration {
        public function __construct() {
            add_action('woocommerce_simple_add_to_cart', [$this, 'maybe_render_form'], 30);
            add_action('woocommerce_after_add_to_cart_form', [$this, 'maybe_render_form'], 30);
        }
        public function maybe_render_form() {
            echo '<form class="wc_bis_form">theirs</form>';
        }
    }
}

namespace {
    define('ABSPATH', __DIR__ . '/');

    // Hooks, as WordPress keeps them: WP_Hook objects in $wp_filter, each
    // with callbacks by priority.
    class WP_Hook {
        public array $callbacks = [];
    }
    $wp_filter = [];

    function add_filter($hook, $fn, $priority = 10, $accepted_args = 1) {
        global $wp_filter;
        $wp_filter[$hook] = $wp_filter[$hook] ?? new WP_Hook();
        $wp_filter[$hook]->callbacks[$priority][] = ['function' => $fn, 'accepted_args' => $accepted_args];
        ksort($wp_filter[$hook]->callbacks);
        return true;
    }
    function add_action($hook, $fn, $priority = 10, $accepted_args = 1) {
        return add_filter($hook, $fn, $priority, $accepted_args);
    }
    function remove_action($hook, $fn, $priority = 10) {
        global $wp_filter;
        if (empty($wp_filter[$hook]->callbacks[$priority])) {
            return false;
        }
        $before = count($wp_filter[$hook]->callbacks[$priority]);
        $wp_filter[$hook]->callbacks[$priority] = array_values(array_filter(
            $wp_filter[$hook]->callbacks[$priority],
            function ($c) use ($fn) { return $c['function'] !== $fn; }
        ));
        return count($wp_filter[$hook]->callbacks[$priority]) < $before;
    }
    function apply_filters($hook, $value, ...$args) {
        global $wp_filter;
        foreach (($wp_filter[$hook] ?? new WP_Hook())->callbacks as $callbacks) {
            foreach ($callbacks as $c) {
                $value = call_user_func_array($c['function'], array_slice(array_merge([$value], $args), 0, $c['accepted_args']));
            }
        }
        return $value;
    }
    function do_action($hook, ...$args) {
        global $wp_filter;
        foreach (($wp_filter[$hook] ?? new WP_Hook())->callbacks as $callbacks) {
            foreach ($callbacks as $c) {
                call_user_func_array($c['function'], array_slice($args, 0, $c['accepted_args']));
            }
        }
    }

    function sanitize_text_field($s) { return trim(strip_tags((string) $s)); }
    function wp_unslash($s) { return stripslashes($s); }
    function esc_attr($s) { return htmlspecialchars((string) $s, ENT_QUOTES, 'UTF-8'); }
    function wp_json_encode($v, $flags = 0) { return json_encode($v, $flags); }
    function get_the_ID() { return $GLOBALS['current_post_id'] ?? false; }
    function wp_is_block_theme() { return $GLOBALS['block_theme'] ?? true; }

    $scripts = ['registered' => [], 'enqueued' => [], 'inline' => []];
    function wp_register_script($handle, $src, $deps = [], $ver = false, $in_footer = false) {
        $GLOBALS['scripts']['registered'][$handle] = $deps;
    }
    function wp_enqueue_script($handle) { $GLOBALS['scripts']['enqueued'][$handle] = true; }
    function wp_add_inline_script($handle, $js) { $GLOBALS['scripts']['inline'][$handle] = $js; }

    // The WooCommerce session (WC_Session_Handler's get/set) and WC().
    class Session {
        public array $data = [];
        public bool $cookie = false;
        public function has_session() { return $this->cookie; }
        public function set_customer_session_cookie($set) { $this->cookie = (bool) $set; }
        public function get($key, $default = null) { return $this->data[$key] ?? $default; }
        public function set($key, $value) { $this->data[$key] = $value; }
    }
    class WooCommerce {
        public ?Session $session = null;
    }
    $woocommerce = new WooCommerce();
    $woocommerce->session = new Session();
    function WC() { return $GLOBALS['woocommerce']; }

    // An order through the CRUD API: meta as WC_Data keeps it.
    class Order {
        private array $meta = [];
        public function update_meta_data($key, $value) {
            foreach ($this->meta as $m) {
                if ($m->key === $key) {
                    $m->value = $value;
                    return;
                }
            }
            $this->meta[] = (object) ['id' => count($this->meta) + 1, 'key' => $key, 'value' => $value];
        }
        public function get_meta($key) {
            foreach ($this->meta as $m) {
                if ($m->key === $key) {
                    return $m->value;
                }
            }
            return '';
        }
        public function get_meta_data() { return $this->meta; }
    }
    class WP_REST_Request {}

    class Product {
        public function __construct(public int $id, public string $name, public string $type, public string $sku, public bool $in_stock, public array $children = []) {}
        public function get_id() { return $this->id; }
        public function get_name() { return $this->name; }
        public function is_type($type) { return $this->type === $type; }
        public function get_children() { return $this->children; }
        public function get_sku() { return $this->sku; }
        public function is_in_stock() { return $this->in_stock; }
    }
    $products = [
        900 => new Product(900, 'Linen tee', 'variable', '', true, [9001, 9002, 9003]),
        9001 => new Product(9001, 'Linen tee - S', 'variation', 'TEE-S', false),
        9002 => new Product(9002, 'Linen tee - M', 'variation', 'TEE-M', true),
        9003 => new Product(9003, 'Linen tee - L', 'variation', 'TEE-L', false),
        70 => new Product(70, 'Walnut lounge chair <b>', 'simple', 'CHAIR-WAL', false),
        71 => new Product(71, 'Brass desk lamp', 'simple', 'LAMP-BRASS', true),
    ];
    function wc_get_product($id) { return $GLOBALS['products'][$id] ?? false; }

    // The block as WP_Block passes itself to render_block: its context.
    class WP_Block {
        public function __construct(public array $context) {}
    }

    $failed = 0;
    function check($ok, $what) {
        global $failed;
        echo ($ok ? '  ok  ' : 'FAILED ') . $what . "\n";
        if (!$ok) {
            $failed++;
        }
    }

    // The "Add to Cart + Options" block's own markup for a variable product
    // (WooCommerce's AddToCartWithOptions::render: the form, its variation
    // selector, the hidden inputs the Interactivity API binds).
    function add_to_cart_with_options_block() {
        return '<form class="wp-block-add-to-cart-with-options wc-block-add-to-cart-with-options" data-wp-interactive="woocommerce/add-to-cart-with-options" data-wp-on--submit="actions.handleSubmit">'
            . '<div class="wp-block-add-to-cart-with-options-variation-selector wc-block-add-to-cart-with-options-variation-selector">'
            . '<div class="wp-block-add-to-cart-with-options-variation-selector-attribute" role="radiogroup" aria-labelledby="attribute-size-label">'
            . '<span id="attribute-size-label">Size</span>'
            . '<label><input type="radio" name="attribute_size" value="S"> S</label>'
            . '<label><input type="radio" name="attribute_size" value="M"> M</label>'
            . '<label><input type="radio" name="attribute_size" value="L"> L</label>'
            . '</div></div>'
            . '<button type="submit" class="wc-block-components-product-button__button">Add to cart</button>'
            . '<div class="single_variation_wrap"><input type="hidden" name="add-to-cart" value="900" /><input type="hidden" name="product_id" value="900" />'
            . '<input type="hidden" name="variation_id" data-wp-bind--value="woocommerce/product-data::state.variationId" /></div>'
            . '</form>';
    }

    [$self, $mode, $plugin] = array_pad($argv, 3, null);
    if (!$plugin || !is_file($plugin)) {
        fwrite(STDERR, "usage: php harness.php check|order|page PLUGIN [HOLD]\n");
        exit(2);
    }
    require $plugin;
    new \Automattic\WooCommerce\Internal\StockNotifications\Frontend\ProductPageIntegration();
    do_action('before_woocommerce_init');

    $block = ['blockName' => 'woocommerce/add-to-cart-with-options', 'attrs' => []];
    if ($mode === 'page') {
        echo apply_filters('render_block', add_to_cart_with_options_block(), $block, new WP_Block(['postId' => 900]));
        exit(0);
    }

    // A reserve link's hold, into the session, then onto an order.
    function order_after_link($hook, $hold, $request) {
        $_GET['hold'] = $hold;
        do_action('woocommerce_init');
        unset($_GET['hold']);
        $order = new Order();
        do_action($hook, $order, $request);
        return $order;
    }
    if ($mode === 'order') {
        $order = order_after_link('woocommerce_store_api_checkout_update_order_from_request', $argv[3] ?? '', new WP_REST_Request());
        echo json_encode(array_map(function ($m) { return (array) $m; }, $order->get_meta_data())), "\n";
        exit(0);
    }

    echo "the plugin's hooks, against WordPress's and WooCommerce's\n";
    $file = realpath($plugin);
    $declared = \Automattic\WooCommerce\Utilities\FeaturesUtil::$declared;
    check(in_array(['custom_order_tables', $file, true], $declared, true), 'it declares HPOS compatibility');
    check(in_array(['cart_checkout_blocks', $file, true], $declared, true), 'and Cart and Checkout blocks compatibility');

    $classic = order_after_link('woocommerce_checkout_create_order', 'hold-classic', []);
    check($classic->get_meta('hold') === 'hold-classic', 'the classic checkout saves the hold on the order');
    check(WC()->session->get('restock_hold') === null, 'and takes it out of the session');
    $blocks = order_after_link('woocommerce_store_api_checkout_update_order_from_request', 'hold-blocks', new WP_REST_Request());
    check($blocks->get_meta('hold') === 'hold-blocks', 'the Checkout block (Store API) saves the hold on the order');
    $none = order_after_link('woocommerce_store_api_checkout_update_order_from_request', '', new WP_REST_Request());
    check($none->get_meta_data() === [], 'an order without a reserve link gets no hold');
    $_GET['hold'] = "<script>x</script>hold-3\\'";
    do_action('woocommerce_init');
    check(WC()->session->get('restock_hold') === "xhold-3'", 'a hold from the address is cleaned of markup and slashes');
    WC()->session->set('restock_hold', null);
    unset($_GET['hold']);

    $page = apply_filters('render_block', add_to_cart_with_options_block(), $block, new WP_Block(['postId' => 900]));
    $json = '[{"id":9001,"sku":"TEE-S","available":false},{"id":9002,"sku":"TEE-M","available":true},{"id":9003,"sku":"TEE-L","available":false}]';
    check(strpos($page, add_to_cart_with_options_block()) === 0, 'on a block theme the block renders as it was');
    $after = substr($page, strlen(add_to_cart_with_options_block()));
    check(strpos($after, '<div data-restock-endpoint=') === 0 && strpos($after, $json) !== false, 'and the form follows it, outside its form, with every variation');
    check(isset($scripts['enqueued']['restock-widget']), 'and its script is enqueued');
    check(apply_filters('render_block', 'x', $block, new WP_Block(['postId' => 900])) === 'x', 'once a page');
    $other = ['blockName' => 'core/paragraph', 'attrs' => []];
    check(apply_filters('render_block', '<p>hi</p>', $other, new WP_Block(['postId' => 70])) === '<p>hi</p>', 'other blocks are left alone');

    ob_start();
    $GLOBALS['product'] = wc_get_product(70);
    do_action('woocommerce_single_product_summary');
    $summary = ob_get_clean();
    check(strpos($summary, 'data-restock-sku="CHAIR-WAL"') !== false && strpos($summary, 'Walnut lounge chair &lt;b&gt;') !== false, 'on a classic theme a sold-out product gets the form, its name escaped');
    check(strpos($summary, 'data-restock-channels="email sms"') !== false, 'told by email or text unless the theme says');
    add_filter('restock_channels', function () { return 'email+sms'; });
    $GLOBALS['products'][72] = new Product(72, 'Limited runner', 'simple', 'SNEAKER-DROP', false);
    check(strpos(restock_widget(wc_get_product(72)), 'data-restock-channels="email+sms"') !== false, 'a theme asks for email and text with the restock_channels filter');
    ob_start();
    $GLOBALS['product'] = wc_get_product(71);
    do_action('woocommerce_single_product_summary');
    check(ob_get_clean() === '', 'a product in stock gets none');

    add_action('woocommerce_after_add_to_cart_form', 'other_plugin', 30);
    function other_plugin() {}
    do_action('wp');
    $left = function ($hook) {
        global $wp_filter;
        $fns = [];
        foreach ($wp_filter[$hook]->callbacks as $callbacks) {
            foreach ($callbacks as $c) {
                $fns[] = is_array($c['function']) ? get_class($c['function'][0]) : $c['function'];
            }
        }
        return $fns;
    };
    check($left('woocommerce_simple_add_to_cart') === [] && $left('woocommerce_after_add_to_cart_form') === ['other_plugin'], "WooCommerce's own stock-notification form is taken off the page, nothing else");

    do_action('wp_enqueue_scripts');
    check(($scripts['registered']['restock-widget'] ?? null) === [], 'on a block theme the script needs no jQuery');
    check(strpos($scripts['inline']['restock-widget'] ?? '', 'restock notify-me widget') !== false, 'and carries the widget');
    $GLOBALS['block_theme'] = false;
    do_action('wp_enqueue_scripts');
    check(($scripts['registered']['restock-widget'] ?? null) === ['jquery'], "on a classic theme it loads after jQuery, for the variation form's events");

    exit($failed ? 1 : 0);
}
