"""The constants of the approximations, checked without the JIT."""
import math
from fractions import Fraction

from irflow.codegen.llvm import mathlib


def test_pi_to_many_bits():
    # the first 50 decimals of pi
    digits = 31415926535897932384626433832795028841971693993751
    assert mathlib._pi_fixed(200) * 10 ** 49 >> 200 == digits


def test_ln2_split_is_exact_for_every_exponent_of_a_double():
    for k in (1, 1097, 1074, -1100):  # the product rounds to itself
        assert Fraction(k) * Fraction(mathlib.LN2_HI) == Fraction(k * mathlib.LN2_HI)
    assert abs(Fraction(mathlib.LN2_HI) + Fraction(mathlib.LN2_LO) - mathlib._ln2()) < 2 ** -100


def test_pio2_split():
    pio2 = Fraction(mathlib._pi_fixed(300), 2 ** 301)
    assert abs(Fraction(mathlib.PIO2_HI) + Fraction(mathlib.PIO2_LO) - pio2) < 2 ** -105


def test_two_over_pi_table_rows_are_2_over_pi_scaled_mod_4():
    table = mathlib.two_over_pi_table()
    two_over_pi = 2 / Fraction(mathlib._pi_fixed(2000), 2 ** 2000)
    for e in (1021, 1023, 1075, 1200, 2046):
        row = table[3 * (e - mathlib._TABLE_FIRST):][:3]
        exact = (Fraction(2) ** (e - 1075) * two_over_pi) % 4
        assert abs(sum(map(Fraction, row)) - exact) < Fraction(2) ** -155
        assert abs(row[1]) <= math.ulp(row[0]) and abs(row[2]) <= math.ulp(row[1])


def test_terms_counts_series_terms():
    assert mathlib._terms(lambda n: 10.0 ** -n, 1e-5) == 6
