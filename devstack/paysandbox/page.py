"""The customer-facing payment page served at confirmation.confirmation_url."""
from __future__ import annotations

from html import escape

_STYLE = ("body{font-family:sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}"
          ".amount{font-size:2rem;margin:1rem 0}form{display:inline-block;margin-right:1rem}"
          "button{font-size:1.1rem;padding:.5rem 1.5rem}.note{color:#777;font-size:.85rem}")


def _page(title: str, inner: str) -> str:
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{inner}"
            "<p class=\"note\">Holdfast local payment sandbox: no real money moves.</p></body></html>")


def checkout_page(payment: dict) -> str:
    amount = payment["amount"]
    desc = escape(payment.get("description") or "")
    pid = escape(payment["id"])
    shown = f"{escape(amount['value'])} {escape(amount['currency'])}"
    head = f"<h1>Payment</h1><div class=\"amount\">{shown}</div><p>{desc}</p>"
    if payment["status"] != "pending":
        return _page("Payment", head + f"<p>This payment is <b>{escape(payment['status'])}</b>.</p>")
    buttons = "".join(
        f"<form method=\"post\" action=\"/checkout/{pid}/{action}\">"
        f"<button type=\"submit\">{label}</button></form>"
        for action, label in (("pay", "Pay"), ("decline", "Decline")))
    return _page("Payment", head + buttons)


def result_page(payment: dict, message: str) -> str:
    return _page("Payment", f"<h1>{escape(message)}</h1><p>Status: <b>{escape(payment['status'])}</b></p>")


def not_found_page() -> str:
    return _page("Not found", "<h1>Payment not found</h1>")


def bad_gateway_page() -> str:
    return ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
            "</center><hr><center>nginx</center></body></html>")
