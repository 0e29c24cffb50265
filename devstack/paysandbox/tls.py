"""A throw-away self-signed certificate for the optional HTTPS listener."""
from __future__ import annotations

import ipaddress
import os
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone


def make_self_signed(host: str = "127.0.0.1") -> tuple[str, str]:
    """Write cert.pem and key.pem into a fresh temp dir; return their paths."""
    folder = tempfile.mkdtemp(prefix="paysandbox-tls-")
    cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:  # pragma: no cover - fallback when cryptography is absent
        _openssl(host, cert_path, key_path)
        return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paysandbox.local")])
    alt: list = [x509.DNSName("localhost")]
    try:
        alt.append(x509.IPAddress(ipaddress.ip_address(host)))
    except ValueError:
        alt.append(x509.DNSName(host))
    if host != "127.0.0.1":
        alt.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    with open(key_path, "wb") as fh:
        fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
    with open(cert_path, "wb") as fh:
        fh.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def _openssl(host: str, cert_path: str, key_path: str) -> None:  # pragma: no cover
    san = f"IP:{host}" if host.replace(".", "").isdigit() else f"DNS:{host}"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key_path, "-out", cert_path, "-days", "30",
                    "-subj", "/CN=paysandbox.local", "-addext", f"subjectAltName={san},DNS:localhost"],
                   check=True, capture_output=True)
