"""The cache chain deck 03 shows names the objects that really hold each cache."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax import lax

from workshop import ClaimFailed, jitcache


def test_a_plain_jit_lands_in_the_cache_chain_names():
    name = jitcache.CHAIN[0][1]
    cache = jitcache.holder(name)
    before = cache.size()
    got = jitcache.probe(jax.jit(lambda x: lax.sin(x) * 3.0), jnp.ones(5))
    assert set(got.values()) == {"miss"} and cache.size() > before, name


def test_probe_refuses_a_chain_that_names_the_wrong_cache(monkeypatch):
    # the name the deck showed on 0.10.2: on 0.12 a plain jit never fills it
    wrong = [("C++ fast path", "pjit._cpp_pjit_cache_fun_only", "")] + jitcache.CHAIN[1:]
    monkeypatch.setattr(jitcache, "CHAIN", wrong)
    with pytest.raises(ClaimFailed, match="did not land in pjit._cpp_pjit_cache_fun_only"):
        jitcache.probe(jax.jit(lambda x: lax.cos(x) - 1.0), jnp.ones(4))
    swapped = jitcache.CHAIN[:1] + [(jitcache.CHAIN[1][0], "pjit._pjit_lower", "")] \
        + jitcache.CHAIN[2:]
    monkeypatch.setattr(jitcache, "CHAIN", swapped)
    with pytest.raises(ClaimFailed, match="which is another object"):
        jitcache.probe(jax.jit(lambda x: lax.tan(x)), jnp.ones(4))
