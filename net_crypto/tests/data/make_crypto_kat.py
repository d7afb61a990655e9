#!/usr/bin/env python3
"""Prints known-answer vectors for rustox's crypto module (docs/protocol.md section 1), computed by
libsodium through PyNaCl (`pip install pynacl`; it bundles libsodium).

The output is committed as crypto_kat.json and checked by tests/crypto_kat.rs. Inputs are
derived deterministically from SHA-256 of fixed labels, so re-running the script reproduces
the same file byte for byte.

Usage: python3 make_crypto_kat.py > crypto_kat.json
"""

import hashlib
import json

from nacl import bindings as sodium


def det(label: str, n: int) -> bytes:
    """n deterministic bytes from a label (SHA-512 stream)."""
    out = b""
    counter = 0
    while len(out) < n:
        out += hashlib.sha512(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:n]


def increment_be(nonce: bytes, x: int) -> bytes:
    """Tox's increment_nonce_number: the 24 bytes as one big-endian number, plus x, mod 2^192."""
    value = (int.from_bytes(nonce, "big") + x) % (1 << 192)
    return value.to_bytes(24, "big")


def main() -> None:
    vectors = {"keypairs": [], "boxes": [], "secretboxes": [], "hashes": [], "nonce_adds": []}

    for i in range(4):
        sk = det(f"keypair-sk-{i}", 32)
        pk = sodium.crypto_scalarmult_base(sk)
        vectors["keypairs"].append({"secret_key": sk.hex(), "public_key": pk.hex()})

    for i, length in enumerate([1, 16, 72, 232, 1373]):
        sk_a = det(f"box-a-{i}", 32)
        sk_b = det(f"box-b-{i}", 32)
        pk_a = sodium.crypto_scalarmult_base(sk_a)
        pk_b = sodium.crypto_scalarmult_base(sk_b)
        nonce = det(f"box-nonce-{i}", 24)
        plaintext = det(f"box-plain-{i}", length)
        shared = sodium.crypto_box_beforenm(pk_b, sk_a)
        assert shared == sodium.crypto_box_beforenm(pk_a, sk_b)
        # crypto_box "easy" layout: [MAC 16][ciphertext], the Tox wire form.
        boxed = sodium.crypto_box_easy(plaintext, nonce, pk_b, sk_a)
        assert sodium.crypto_box_open_easy(boxed, nonce, pk_a, sk_b) == plaintext
        vectors["boxes"].append({
            "secret_key_a": sk_a.hex(),
            "public_key_b": pk_b.hex(),
            "secret_key_b": sk_b.hex(),
            "public_key_a": pk_a.hex(),
            "shared_key": shared.hex(),
            "nonce": nonce.hex(),
            "plaintext": plaintext.hex(),
            "boxed": boxed.hex(),
        })

    for i, length in enumerate([1, 72, 500]):
        key = det(f"secretbox-key-{i}", 32)
        nonce = det(f"secretbox-nonce-{i}", 24)
        plaintext = det(f"secretbox-plain-{i}", length)
        boxed = sodium.crypto_secretbox_easy(plaintext, nonce, key)
        vectors["secretboxes"].append({
            "key": key.hex(), "nonce": nonce.hex(), "plaintext": plaintext.hex(), "boxed": boxed.hex(),
        })

    for length in [0, 3, 112, 1000]:
        data = det(f"hash-{length}", length)
        vectors["hashes"].append({
            "data": data.hex(),
            "sha256": sodium.crypto_hash_sha256(data).hex(),
            "sha512": sodium.crypto_hash_sha512(data).hex(),
        })

    nonce_cases = [
        (bytes(24), 1),
        (bytes(22) + b"\xff\xff", 1),
        (b"\xff" * 24, 1),
        (b"\xff" * 24, 0xFFFFFFFF),
        (det("nonce-add-0", 24), 21845),
        (bytes(20) + b"\x00\xff\xff\xff", 0xFFFFFFFF),
        (det("nonce-add-1", 24), 0x01000000),
    ]
    for nonce, x in nonce_cases:
        expected = increment_be(nonce, x)
        if x == 1:
            # libsodium's sodium_increment is little-endian, so it cannot check Tox's big-endian
            # increment directly; reversing the bytes around it can.
            assert sodium.sodium_increment(nonce[::-1])[::-1] == expected
        vectors["nonce_adds"].append({"nonce": nonce.hex(), "add": x, "result": expected.hex()})

    print(json.dumps(vectors, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
