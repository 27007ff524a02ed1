"""Search Arena (Miroyan et al., seed 000): everything of the paper, from the raw release to its figures.

Data
    :mod:`~.schema` (the release's vocabulary: winners, sides, intents), :mod:`~.models` (the model table and
    anchor), :mod:`~.release` (reading a raw release and checking its schema), :mod:`~.hub` (the pinned release
    on the Hugging Face hub, ``hf[:REF]``; ``[hf]`` extra), :mod:`~.loader` (the tidy battle
    frame: :func:`~.loader.load_battles`), :mod:`~.domains` (citation URL → source group, App. E.2),
    :mod:`~.prompt_sets` (the describing-differences prompt and answer sets), :mod:`~.simulate` (the release,
    attribution-subset and Text Arena simulators)
Prompts
    :mod:`~.descriptive` (Table 1, Fig 2: descriptive statistics), :mod:`~.languages`, :mod:`~.intents` (intent
    labels through the LLM layer), :mod:`~.topics` (BERTopic topics; ``[topics]`` extra), :mod:`~.encoder` (the
    offline sentence encoder and its precision), :mod:`~.describe`
    (describing differences through the LLM layer)
Preferences
    :mod:`~.bt` (the paper's Bradley–Terry layer over :mod:`analysis_lib.ranking`: battle filters, feature sets,
    the Table D.1 leaderboard, style control), :mod:`~.preference` (win rates, per-intent and per-source
    summaries), :mod:`~.plots` (the preference chapters' figures), :mod:`~.cross_arena` (§3.3, App. F),
    :mod:`~.methods_validation` (the estimators against the simulator's planted truth)

Importing this package imports none of its modules: ``from analysis_lib.search_arena import bt, loader``.
"""
