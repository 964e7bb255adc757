"""The measured peak of a disc-run against the memory model's prediction.

`check(report, what, bound)` reads a `disc-run --report` JSON file and
returns (failures, text): with `bound` False the prediction must be exact
(measured == predicted, not flagged as an upper bound); with `bound` True it
must be flagged as an upper bound (control flow or data-dependent sizes,
docs/memory.md "Upper bounds") and the measured peak at most the bound.
"""

import json


def check(report, what, bound):
    with open(report) as f:
        rep = json.load(f)
    measured = rep.get("peak_bytes")
    predicted = rep.get("predicted_peak_bytes")
    is_bound = bool(rep.get("predicted_peak_is_upper_bound"))
    if not isinstance(predicted, int):
        return [f"{what}: no predicted peak ({rep.get('unpredictable_reason')})"], ""
    if is_bound != bound:
        return [f"{what}: the prediction is {'' if is_bound else 'not '}"
                f"an upper bound, expected {'' if bound else 'not '}one"], ""
    if measured > predicted or (not bound and measured != predicted):
        return [f"{what}: measured peak {measured} bytes, predicted "
                f"{'at most ' if bound else ''}{predicted}"], ""
    rel = "<=" if bound else "=="
    kind = "bound" if bound else "predicted"
    return [], (f"peak {measured} {rel} {kind} {predicted}"
                f" ({measured / predicted:.2f})" if predicted else "")
