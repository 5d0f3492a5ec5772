"""The kit's tunables, in one place, each with its reason. The runtime (decks, labs) and the
tools both read them from here; each module that uses one imports it by name, so a test can
still set it where it is used (monkeypatch.setattr(execute, "CELL_TIMEOUT", 2)).

Change one and see what it moves: most are measured against a 1280×720 slide at 20 px type and
the 2-core machine the tests and CI run on.
"""

# ---------------------------------------------------------------- what a slide holds
SLIDE_W = 1184       # px: the widest a picture is shown on a 1280×720 slide (48 px margins)
MIN_PX = 18          # px: the smallest text a picture draws at that width (the back row reads it)
WIDTH = 96           # columns of a slide's output at 20 px (DejaVu Sans Mono: 12 px a column)
MAX_LINES = 14       # lines of an artefact (jaxpr, HLO, source) shown on one slide
CODE_LINES = 12      # lines of a slide's code cell (tests/test_structure.py): with its output
CODE_COLUMNS = 80    # columns of a slide's code cell: 80 at 20 px leave room for the prompt
FILE_MAP_ROWS = 32   # rows of a file map on one slide: two columns of 16 at 20 px

# ---------------------------------------------------------------- an attendee's kernel
N_DEVICES = 8        # fake CPU devices: the mesh of the sharding phase (2×4), on any laptop
CHECK_TIME_LIMIT = 60.0   # s a lab check may take; its reference computations take a few

# ---------------------------------------------------------------- the build
CELL_TIMEOUT = 120   # s: a cell that hangs fails the run instead of the build hanging
# bytes of output one cell may make (text, pictures, a traceback): about 40 000 lines, where a
# slide shows 30 and the biggest picture a deck makes is under 0.5 MB. A cell that makes more is
# stopped: a print of 50 MB kept the build busy for over 10 minutes
OUTPUT_CAP = 4 * 2**20
PARALLEL = 2         # notebooks at once: the machines have 2 cores; more gives kernel start-up
                     # races (nbmake #129)
CELL_BUDGET = 2.0    # s a cell may take on the 2-core machine, unless it is tagged `slow`
DECK_BUDGET = 30.0   # s for a whole deck's run
# the slides PDF is the talk path laid out as RISE lays out the live slide (its box, faces and
# metrics): a slide printed smaller than this to fit its page needs the wheel on the
# projector, so it must be split (0.99: a pixel or two of rounding between print and screen)
MIN_SCALE = 0.99
# a slide whose content is smaller than the slide is grown to fill it (page_scripts/fill.js), its
# title kept, up to this factor: body text 26 -> 42 px (Quarto's 40 px on a 700 px slide), code
# 20 -> 32 px, still under the title's 46; a talk slide's content then reaches this share of
# the slide's height, unless it is a title or a divider or its lines are too wide to grow
FILL_LIMIT = 1.6
FILL_SHARE = 0.6

# ---------------------------------------------------------------- the talk-time estimate
WORDS_PER_MINUTE = 130   # a presenter's pace, notes read aloud
EXPLAIN = 1.2            # slides are explained, not read aloud
CODE_CELL_S = 25         # s for a code cell: run it, let the room read the output
SLIDE_S = 5              # s for a slide change: the move, the room settling on it
QUESTIONS = 0.15         # of the talk, for the room's questions
TALK_CELL_BUDGET = 1.5   # s a talk-path cell may take: no silent pause on stage
# s behind or ahead of the plan before the notes window offers a deck's cut or expansion
# (metadata.workshop.pacing): more than one slide's estimate (1 to 3 min), so one slow
# slide or one question alone does not trigger it
PACING_THRESHOLD = 120

# ---------------------------------------------------------------- the schedule (minutes)
DAYS = 2
SESSION = 120        # teaching before a break
BREAK = 15
LUNCH = 60
LUNCH_AT = 12 * 60 + 30
LUNCH_WINDOW = (11 * 60 + 30, 14 * 60)   # lunch moves within it to fall between two decks
SETUP = 20           # day 1 opens with every laptop installed and `doctor` green: the install
                     # took 3 min on a plain venv, doctor 40 s; the rest is for the few that fail
DEBRIEF = 10         # after each lab: its common mistakes and what to take away (the debrief
                     # page per lab, handouts/presenter/)
WRAP_UP = 15         # the end of day 2: questions, what to read next, feedback
