"""Numeric query and path parameters written the plain way (docs/reviewers.md: "A number is ASCII digits").

pydantic's lax parsing follows Python's int() and float(): it takes "+5", " 5", "5.0", "1_0" and "05" as whole
numbers and "0.5_0" as a fraction. Here a whole number is a run of ASCII digits without a leading zero (`/queries/01`
is a mistake, not query 1) and a fraction a decimal (an exponent allowed), each with a leading minus so a negative
value is told it is out of range; anything else gets the same 400 as "abc".
"""

from __future__ import annotations

import re

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

DIGITS = re.compile(r"-?(?:0|[1-9][0-9]*)")
_LEADING_ZERO = re.compile(r"-?0[0-9]+")
DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _digits_only(value: object) -> object:
    if isinstance(value, str) and _LEADING_ZERO.fullmatch(value):
        raise PydanticCustomError("int_parsing", "Input should be a valid integer, written without a leading zero")
    if isinstance(value, str) and not DIGITS.fullmatch(value):
        raise PydanticCustomError("int_parsing",
                                  "Input should be a valid integer, unable to parse string as an integer")
    return value


def _decimal_only(value: object) -> object:
    if isinstance(value, str) and not DECIMAL.fullmatch(value):
        raise PydanticCustomError("float_parsing", "Input should be a valid number, unable to parse string as a number")
    return value


WholeNumber = BeforeValidator(_digits_only)
Decimal = BeforeValidator(_decimal_only)
