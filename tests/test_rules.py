"""Rule contract: codes, docs, and the inline examples (which are also the docs' examples)."""

from __future__ import annotations

import re
import textwrap

import pytest

from tfproc_lint.config import Config, apply_options
from tfproc_lint.engine import lint_source
from tfproc_lint.fixing import fix_source
from tfproc_lint.rules.base import FixAvailability, all_rules

RULES = all_rules()
EXAMPLES = [
    (rule, kind, index, example)
    for rule in RULES
    for kind, examples in (("bad", rule.bad_examples), ("good", rule.good_examples))
    for index, example in enumerate(examples)
]


def test_codes_are_unique_and_well_formed() -> None:
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"TFP\d{3}", code) for code in codes)
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))


def test_the_core_rules_exist() -> None:
    assert {"TFP101", "TFP102", "TFP103", "TFP201", "TFP204", "TFP301"} <= {rule.code for rule in RULES}


@pytest.mark.parametrize("rule", [r for r in RULES if not r.default_enabled], ids=lambda r: r.code)
def test_opt_in_rules_show_that_they_are_off_until_selected(rule) -> None:
    """Each bad example selects its rule; the same code under the default configuration is clean of it."""
    for example in rule.bad_examples:
        assert any(key in ("select", "extend-select") for key, _ in example.config), rule.code
        assert rule.code not in {d.code for d in lint_source(example.code, "example.py")}


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_rule_documentation_is_complete(rule) -> None:
    for section in ("summary", "what_it_does", "why_bad", "fix_safety", "evidence"):
        assert len(getattr(rule, section).strip()) > 20, f"{rule.code}.{section} is empty"
    assert rule.references and all(r.startswith("https://") for r in rule.references)
    assert rule.bad_examples and rule.good_examples
    assert all(example.fixed is None for example in rule.good_examples), f"{rule.code}: `fixed` is for bad examples"
    if rule.fix_availability is FixAvailability.NONE:
        assert all(example.fixed is None for example in rule.bad_examples), f"{rule.code} offers no fix"
    assert isinstance(rule.fix_availability, FixAvailability)


@pytest.mark.parametrize(
    "rule,kind,index,example", EXAMPLES, ids=[f"{r.code}-{k}{i}" for r, k, i, _ in EXAMPLES]
)
def test_inline_example(rule, kind, index, example) -> None:
    config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
    codes = sorted(d.code for d in lint_source(example.code, "example.py", config, notebook=example.notebook))
    assert codes == sorted(example.expect)
    if kind == "bad":
        assert rule.code in example.expect


BAD_FIXABLE = [(rule, index, example) for rule, kind, index, example in EXAMPLES
               if kind == "bad" and rule.fix_availability is not FixAvailability.NONE and not example.notebook]


@pytest.mark.parametrize("rule,index,example", BAD_FIXABLE, ids=[f"{r.code}-bad{i}" for r, i, _ in BAD_FIXABLE])
def test_inline_example_fix(rule, index, example) -> None:
    """A bad example's `fixed` is what `--fix --unsafe-fixes` makes of it; without `fixed`, no fix applies."""
    config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
    outcome = fix_source(example.code, "example.py", config, unsafe=True)
    if example.fixed is None:
        assert outcome.source == example.code, "the fix applies: give the example `fixed=` with the result"
        return
    assert outcome.source == example.fixed
    assert rule.code not in {d.code for d in outcome.remaining}


@pytest.mark.parametrize("rule", [r for r in RULES if r.fix_availability is not FixAvailability.NONE],
                         ids=lambda r: r.code)
def test_a_fixable_rule_shows_a_fix_in_an_example(rule) -> None:
    assert any(example.fixed is not None for example in rule.bad_examples), \
        f"{rule.code} offers a fix: give a bad example `fixed=` (what --fix --unsafe-fixes makes of it)"


def test_messages_name_the_code_once_and_are_single_line() -> None:
    for rule in RULES:
        for example in rule.bad_examples:
            config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
            for diagnostic in lint_source(example.code, "example.py", config, notebook=example.notebook):
                assert "\n" not in diagnostic.message
                assert not diagnostic.message.startswith("TFP")


def test_tfp204_names_the_class_a_keras_dataset_worker_needs():
    """Spawned Keras data workers unpickle the dataset by its class: the message names the class
    the notebook defines, not its `__getitem__`."""
    from tfproc_lint.engine import lint_source

    program = textwrap.dedent("""\
        import multiprocessing as mp
        import keras
        import numpy as np

        class Batches(keras.utils.PyDataset):
            def __init__(self, **kwargs):
                super().__init__(workers=2, use_multiprocessing=True, **kwargs)

            def __len__(self):
                return 4

            def __getitem__(self, index):
                return np.zeros((8, 4)), np.zeros((8, 1))

        mp.set_start_method("spawn", force=True)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        model.fit(Batches(), epochs=1)
        """)
    found = [d for d in lint_source(program, "notebook.ipynb", notebook=True) if d.code == "TFP204"]
    assert found and "move `Batches` into a module" in found[0].message, found
    assert "Can't get attribute 'Batches'" in found[0].message
