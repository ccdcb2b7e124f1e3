"""Display names of methods and environments, shared by tables and figures."""

DISPLAY_NAMES = {
    "random": "Random",
    "linucb": "LinUCB",
    "hare": "HARE",
    "hare_oracle": "HARE (oracle W)",
    "hare_random": "HARE (random W)",
    "synthetic_linear": "HARE-Sim (linear)",
    "mushroom": "Mushroom",
}


def display_name(name: str) -> str:
    """The name a reader sees for a config label (labels with a grid point keep their point)."""
    base, _, point = name.partition("@")
    shown = DISPLAY_NAMES.get(base, base)
    return f"{shown} [{point}]" if point else shown
