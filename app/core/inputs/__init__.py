"""What the outside world hands the core, validated: a view's Scenario (scenario), the model
and hardware presets and specs (models, hardware, presets, specs, training), loaded hardware
profiles, Hugging Face config import, and a worker's records (protocol). Imports simulate,
schedules, layout and support only: a Scenario names a schedule and teaching durations."""
