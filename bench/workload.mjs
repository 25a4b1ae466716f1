// The call every client benchmark makes, shared by bench/client.mjs and bench/track-ab.mjs.

/** An "Order Completed" track call with about 300 bytes of properties, distinct per call. */
export function orderCompleted(i, messageId) {
  const params = {
    userId: `user-${i % 10_000}`,
    event: 'Order Completed',
    properties: {
      checkout_id: `checkout-${i}`,
      order_id: `order-${i}`,
      affiliation: 'Online Store',
      total: 27.5 + (i % 100),
      revenue: 25,
      shipping: 3,
      tax: 2,
      discount: 2.5,
      coupon: 'SUMMER',
      currency: 'USD',
      products: [{ product_id: '507f1f77bcf86cd799439011', sku: '45790-32', name: 'Monopoly: 3rd Edition', price: 19, quantity: 1 }],
    },
  };
  if (messageId !== undefined) params.messageId = messageId;
  return params;
}
