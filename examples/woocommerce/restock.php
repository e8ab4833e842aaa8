<?php
/**
 * Plugin Name: restock
 * Description: The restock notify-me form on sold-out products and variations (classic and block themes), and the hold from a restock reserve link (?hold=...) kept until checkout and saved on the order (classic and block checkout), so the order ends the hold.
 * Version: 1.3.0
 * Requires Plugins: woocommerce
 * Requires PHP: 7.4
 * WC requires at least: 8.3
 * License: Apache-2.0
 *
 * `restock connect woocommerce --plugin FILE` writes this file with the
 * stack's CaptureUrl and the widget's script filled in.
 */

defined('ABSPATH') || exit;

const RESTOCK_ENDPOINT = 'RESTOCK_CAPTURE_URL';

// Orders in WooCommerce's own tables (HPOS) and the Cart and Checkout
// blocks: this plugin reads and writes orders through the order CRUD API only.
add_action('before_woocommerce_init', function () {
    if (class_exists('\Automattic\WooCommerce\Utilities\FeaturesUtil')) {
        \Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility('custom_order_tables', __FILE__, true);
        \Automattic\WooCommerce\Utilities\FeaturesUtil::declare_compatibility('cart_checkout_blocks', __FILE__, true);
    }
});

// A reserve link (?hold=...) keeps its hold in the shopper's session.
add_action('woocommerce_init', function () {
    if (empty($_GET['hold']) || !WC()->session) {
        return;
    }
    if (!WC()->session->has_session()) {
        WC()->session->set_customer_session_cookie(true);
    }
    WC()->session->set('restock_hold', sanitize_text_field(wp_unslash($_GET['hold'])));
});

// The hold goes on the order as its `hold` meta, which the order webhook
// shows: from the classic checkout and from the Checkout block (Store API).
function restock_keep_hold($order) {
    $hold = WC()->session ? WC()->session->get('restock_hold') : null;
    if ($hold) {
        $order->update_meta_data('hold', $hold);
        WC()->session->set('restock_hold', null);
    }
}
add_action('woocommerce_checkout_create_order', 'restock_keep_hold');
add_action('woocommerce_store_api_checkout_update_order_from_request', 'restock_keep_hold');

// The notify-me form for a product, or '' where it has none to show: a
// simple product while it is out of stock, a variable product with every
// variation and whether it is in stock (the form follows the shopper's
// choice), once a page.
function restock_widget($product) {
    static $shown = [];
    if (!$product || isset($shown[$product->get_id()])) {
        return '';
    }
    $attributes = 'data-restock-endpoint="' . esc_attr(RESTOCK_ENDPOINT) . '" data-restock-product="' . esc_attr($product->get_name()) . '"';
    // How shoppers are told: 'email sms' (either), 'email', 'sms', or
    // 'email+sms' (both, an address and a number). A theme sets it with
    // add_filter('restock_channels', fn () => 'email+sms');
    $attributes .= ' data-restock-channels="' . esc_attr(apply_filters('restock_channels', 'email sms', $product)) . '"';
    if ($product->is_type('variable')) {
        // Every variation, sold out ones too: the list of available
        // variations leaves those out where the shop hides out-of-stock items.
        $variants = [];
        foreach ($product->get_children() as $id) {
            $v = wc_get_product($id);
            if ($v) {
                $variants[] = ['id' => $id, 'sku' => $v->get_sku(), 'available' => $v->is_in_stock()];
            }
        }
        $html = '<div ' . $attributes . '><script type="application/json">' . wp_json_encode($variants, JSON_HEX_TAG | JSON_HEX_AMP) . '</script></div>';
    } elseif (!$product->is_in_stock() && $product->get_sku()) {
        $html = '<div ' . $attributes . ' data-restock-sku="' . esc_attr($product->get_sku()) . '"></div>';
    } else {
        return '';
    }
    $shown[$product->get_id()] = true;
    wp_enqueue_script('restock-widget');
    return $html;
}

// Classic themes: in the product summary.
add_action('woocommerce_single_product_summary', function () {
    global $product;
    echo restock_widget($product);
}, 35);

// Block themes: after the "Add to Cart + Options" block (or the older
// "Add to Cart with Options" form block), outside its form.
add_filter('render_block', function ($content, $block, $instance = null) {
    $after = ['woocommerce/add-to-cart-with-options', 'woocommerce/add-to-cart-form'];
    if (!in_array($block['blockName'] ?? '', $after, true)) {
        return $content;
    }
    $id = $instance->context['postId'] ?? get_the_ID();
    return $content . restock_widget($id ? wc_get_product($id) : null);
}, 10, 3);

// One form on the page: WooCommerce's own stock notifications, when on,
// would add theirs beside it. Only its form goes; its sign-ups are sent.
add_action('wp', function () {
    global $wp_filter;
    $theirs = 'Automattic\WooCommerce\Internal\StockNotifications\Frontend\ProductPageIntegration';
    foreach (['woocommerce_simple_add_to_cart', 'woocommerce_after_add_to_cart_form'] as $hook) {
        if (empty($wp_filter[$hook])) {
            continue;
        }
        foreach ($wp_filter[$hook]->callbacks as $priority => $callbacks) {
            foreach ($callbacks as $callback) {
                $fn = $callback['function'];
                if (is_array($fn) && $fn[0] instanceof $theirs) {
                    remove_action($hook, $fn, $priority);
                }
            }
        }
    }
});

add_action('wp_enqueue_scripts', function () {
    // jQuery for the classic variation form's events; a block theme's
    // product block needs none.
    $block_theme = function_exists('wp_is_block_theme') && wp_is_block_theme();
    wp_register_script('restock-widget', false, $block_theme ? [] : ['jquery'], '1.3.0', true);
    wp_add_inline_script('restock-widget', <<<'RESTOCK_WIDGET_JS'
/* RESTOCK_WIDGET_SCRIPT: the widget, crates/local/assets/restock-widget.js */
RESTOCK_WIDGET_JS
    );
});
