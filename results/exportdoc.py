# exportdoc.py: reads and writes a pmtune export document as results/ keeps it (JSON, or gzip'd JSON), for rekey.py and compact.py.
import gzip
import subprocess


def read(path):
    """The document's text and its bytes as stored."""
    with open(path, "rb") as f:
        raw = f.read()
    return (gzip.decompress(raw) if path.endswith(".gz") else raw).decode("utf-8"), raw


def write(path, text):
    """Writes text, compressed with `gzip -9 -n` (no name, no time: the same bytes every time)
    where path ends in .gz; returns the bytes written."""
    data = text.encode("utf-8")
    if path.endswith(".gz"):
        data = subprocess.run(["gzip", "-9", "-n", "-c"], input=data, check=True,
                              capture_output=True).stdout
    with open(path, "wb") as f:
        f.write(data)
    return data
