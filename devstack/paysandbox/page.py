"""The sandbox's pages: the customer's payment page (confirmation.confirmation_url) and the
ledger of payments with their refunds and fiscal receipts (/sandbox/ledger)."""
from __future__ import annotations

from html import escape

_STYLE = ("body{font-family:sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}"
          ".amount{font-size:2rem;margin:1rem 0}form{display:inline-block;margin-right:1rem}"
          "button{font-size:1.1rem;padding:.5rem 1.5rem}.note{color:#555;font-size:.85rem}"
          "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #bbb;padding:.2rem .5rem;"
          "text-align:left;font-size:.9rem}")


def _page(title: str, inner: str) -> str:
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{inner}"
            "<p class=\"note\">Holdfast local payment sandbox: no real money moves.</p></body></html>")


def receipts_section(receipts: list[dict]) -> str:
    """The fiscal receipts of one payment and its refunds: type, status, items and their sum."""
    if not receipts:
        return "<p>No fiscal receipt.</p>"
    rows = []
    for r in receipts:
        items = "<br>".join(
            f"{escape(i['description'])} &times; {escape(i['quantity'])} @ {escape(i['amount']['value'])}"
            f" (VAT code {i['vat_code']}{', ' + escape(i['payment_mode']) if i.get('payment_mode') else ''})"
            for i in r["items"])
        settled = " settles a prepayment" if any(s["type"] == "prepayment" for s in r.get("settlements", ())) else ""
        rows.append(f"<tr><td>{escape(r['type'])}{settled}</td><td>{escape(r['status'])}</td>"
                    f"<td>{items}</td><td>{escape(r['created_at'])}</td></tr>")
    return ("<table><caption>Fiscal receipts</caption><tr><th scope=\"col\">Type</th>"
            "<th scope=\"col\">Status</th><th scope=\"col\">Items</th><th scope=\"col\">Created</th></tr>"
            + "".join(rows) + "</table>")


def checkout_page(payment: dict, receipts: list[dict] = ()) -> str:
    amount = payment["amount"]
    desc = escape(payment.get("description") or "")
    pid = escape(payment["id"])
    shown = f"{escape(amount['value'])} {escape(amount['currency'])}"
    head = f"<h1>Payment</h1><div class=\"amount\">{shown}</div><p>{desc}</p>"
    if payment["status"] != "pending":
        return _page("Payment", head + f"<p>This payment is <b>{escape(payment['status'])}</b>.</p>"
                     + receipts_section(list(receipts)))
    buttons = "".join(
        f"<form method=\"post\" action=\"/checkout/{pid}/{action}\">"
        f"<button type=\"submit\">{label}</button></form>"
        for action, label in (("pay", "Pay"), ("decline", "Decline")))
    return _page("Payment", head + buttons)


def result_page(payment: dict, message: str, receipts: list[dict] = ()) -> str:
    return _page("Payment", f"<h1>{escape(message)}</h1><p>Status: <b>{escape(payment['status'])}</b></p>"
                 + (receipts_section(list(receipts)) if receipts else ""))


def ledger_page(rows: list[tuple[dict, list[dict], list[dict]]], shop: dict) -> str:
    """Payments, newest first, each with its refunds and its receipts beside it."""
    parts = [f"<h1>Sandbox ledger</h1><p>Shop {escape(shop['shop_id'])}: receipts "
             f"<b>{escape(shop['receipts'])}</b>.</p>"]
    if not rows:
        parts.append("<p>No payments yet.</p>")
    for payment, refunds, receipts in rows:
        amount = payment["amount"]
        refunded = ", ".join(f"{escape(r['amount']['value'])} ({escape(r['status'])})" for r in refunds)
        parts.append(f"<h2>{escape(amount['value'])} {escape(amount['currency'])}: {escape(payment['status'])}</h2>"
                     f"<p>{escape(payment.get('description') or '')} <code>{escape(payment['id'])}</code>"
                     + (f"<br>Refunds: {refunded}" if refunds else "") + "</p>"
                     + receipts_section(receipts))
    return _page("Sandbox ledger", "".join(parts))


def not_found_page() -> str:
    return _page("Not found", "<h1>Payment not found</h1>")


def bad_gateway_page() -> str:
    return ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
            "</center><hr><center>nginx</center></body></html>")
