"""The publishing workflow (.github/workflows/publish.yml; issue 32, item 35) does what the README
says it does, with the file names the build writes: a push to main tests and deploys _build/html
to GitHub Pages; a tag v* tests, checks the tag against the version and attaches the PDFs and
both notebook editions to the release. (`make lint` validates the file against the workflow
schema; this checks what it does.)"""

import re
from pathlib import Path

import downloads
import make_pdf
import yaml

ROOT = Path(__file__).resolve().parents[2]

WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "publish.yml").read_text("utf-8"))
JOBS = WORKFLOW["jobs"]


def _uses(job: str) -> dict[str, dict]:
    return {s["uses"].split("@")[0]: s for s in JOBS[job]["steps"] if "uses" in s}


def _runs(job: str) -> str:
    return "\n".join(s.get("run", "") for s in JOBS[job]["steps"])


def test_it_runs_on_pushes_to_main_and_on_version_tags():
    on = WORKFLOW[True] if True in WORKFLOW else WORKFLOW["on"]  # YAML 1.1 reads "on" as True
    assert on["push"]["branches"] == ["main"] and on["push"]["tags"] == ["v*"]
    assert WORKFLOW["permissions"] == {"contents": "read"}  # each job asks for what it needs


def test_every_push_runs_make_test_and_pages_deploys_what_it_built():
    assert "make test" in _runs("test")
    upload = _uses("test")["actions/upload-pages-artifact"]
    assert upload["with"]["path"] == "_build/html"
    assert upload["if"] == "github.ref == 'refs/heads/main'"
    pages = JOBS["pages"]
    assert pages["needs"] == "test" and pages["if"] == "github.ref == 'refs/heads/main'"
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert pages["environment"]["name"] == "github-pages"
    assert "actions/deploy-pages" in _uses("pages")


def test_a_tag_attaches_the_pdfs_and_both_editions_that_the_build_writes():
    runs = _runs("test")
    assert "lib/llmphys/__init__.py" in runs and '"v$version"' in runs  # the tag is the version
    assert "make_pdf.py --instructor" in runs
    release = JOBS["release"]
    assert release["needs"] == "test" and release["permissions"] == {"contents": "write"}
    attached = set(re.findall(r"dist/([\w.-]+\.(?:pdf|zip))", _runs("release")))
    built = {make_pdf.OUT.name, make_pdf.INSTRUCTOR_OUT.name} | {
        Path(z).name for z in downloads.ZIPS.values()}
    assert attached == built, (attached, built)
    assert Path(downloads.PDF).name == make_pdf.OUT.name  # the site links the same file
