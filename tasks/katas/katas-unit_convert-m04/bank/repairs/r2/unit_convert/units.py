"""Unit tables and the conversion itself, independent of the command line."""

# Factors to each category's base unit (m, g, s).
LINEAR = {
    "length": {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048,
               "yd": 0.9144, "mi": 1609.344},
    "mass": {"mg": 0.001, "g": 1.0, "kg": 1000.0, "oz": 28.349523125, "lb": 453.59237},
    "time": {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0},
}
TEMPERATURE = ("C", "F", "K")
ABSOLUTE_ZERO_TOLERANCE = 1e-9


class ConversionError(Exception):
    pass


def category_of(unit):
    if unit in TEMPERATURE:
        return "temperature"
    for name, table in LINEAR.items():
        if unit in table:
            return name
    raise ConversionError(f"unknown unit {unit!r}")


def _to_kelvin(value, unit):
    if unit == "K":
        return value
    if unit == "C":
        return value + 273.15
    return (value - 32) * 5 / 9 + 273.15


def _from_kelvin(kelvin, unit):
    if unit == "K":
        return kelvin
    if unit == "C":
        return kelvin - 273.15
    return (kelvin - 273.15) * 9 / 5 + 32


def convert(value, source, target):
    kind = category_of(source)
    target_kind = category_of(target)
    if kind != target_kind and "length" in (kind, target_kind):
        raise ConversionError(f"cannot convert {kind} ({source}) to {target_kind} ({target})")
    if kind == "temperature":
        kelvin = _to_kelvin(value, source)
        if kelvin < -ABSOLUTE_ZERO_TOLERANCE:
            raise ConversionError(f"{value} {source} is below absolute zero")
        return _from_kelvin(kelvin, target)
    table = LINEAR[kind]
    return value * table[source] / table[target]
