#!/usr/bin/env python3
"""Honest anchors for the benches (issue 37): NumPy and PyTorch at their best on the machine
the bench runs on, and the machine's read bandwidth measured in the same run.

- BLAS: Debian's python3-numpy and python3-torch call whatever libblas.so.3 is installed,
  the unoptimized reference BLAS unless libopenblas0-pthread is. When OpenBLAS is not
  installed, `apt-get download libopenblas0-pthread` is unpacked into bench/out/openblas
  (once) and the children get it through LD_LIBRARY_PATH.
- Core type: Debian 12's OpenBLAS 0.3.21 does not recognise some newer CPUs and falls back
  to SSE3 kernels. The core OpenBLAS picks is read from OPENBLAS_VERBOSE=2's "Core:" line;
  when it is weaker than the CPU's instructions (AVX-512: SkylakeX, AVX2: Haswell) and
  OPENBLAS_CORETYPE is not set by the user, the children get OPENBLAS_CORETYPE.
- Threads: PyTorch is timed at 1 and nproc threads on one short run; the faster is kept.
- Bandwidth: NumPy's max over a 1 GiB float64 array, best of 3, in bytes per second.

    /usr/bin/python3 bench/anchors.py                    print the anchors and the bandwidth
    /usr/bin/python3 bench/anchors.py --env [--blas DIR]  KEY=VALUE lines of the variables to set
                                                         for NumPy (bench/run), the notes on stderr;
                                                         --blas: OpenBLAS's folder, not the default
"""
import json
import os
import re
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
PYTHON = "/usr/bin/python3"
SYSTEM_OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
LOCAL_OPENBLAS = os.path.join(OUT, "openblas", "usr", "lib", "x86_64-linux-gnu", "openblas-pthread")
# The cores whose kernels use at least these instructions, as OpenBLAS 0.3.21 names them.
AT_LEAST = {"Haswell": {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"},
            "SkylakeX": {"SkylakeX", "Cooperlake", "SapphireRapids"}}
PROBE = "import numpy; numpy.ones((64, 64)) @ numpy.ones((64, 64))"


def cpu_flags():
    """The instruction set flags of /proc/cpuinfo's first processor."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def wanted_core(flags):
    """The OpenBLAS core type this CPU's instructions allow: SkylakeX, Haswell or None."""
    return "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None


def openblas_dir(given=None):
    """GIVEN when set, else the folder holding OpenBLAS's libblas.so.3: Debian's when installed, else the package
    unpacked into bench/out/openblas (downloaded by apt-get on first use); None if neither."""
    if given:
        return given
    if os.path.exists(os.path.join(SYSTEM_OPENBLAS, "libblas.so.3")):
        return SYSTEM_OPENBLAS
    if not os.path.exists(os.path.join(LOCAL_OPENBLAS, "libblas.so.3")):
        work = os.path.join(OUT, "openblas-deb")
        os.makedirs(work, exist_ok=True)
        try:
            subprocess.run(["apt-get", "download", "libopenblas0-pthread"], cwd=work, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deb = [f for f in os.listdir(work) if f.endswith(".deb")][0]
            subprocess.run(["dpkg", "-x", os.path.join(work, deb), os.path.join(OUT, "openblas")], check=True)
        except (OSError, subprocess.CalledProcessError, IndexError):
            return None
    return LOCAL_OPENBLAS


def probe_core(env):
    """(OpenBLAS's "Core:" as OPENBLAS_VERBOSE=2 prints it, or None, the BLAS library NumPy loaded)."""
    code = PROBE + "; import re; print(*sorted({l.split()[-1] for l in open('/proc/self/maps') if re.search('blas', l)}))"
    done = subprocess.run([PYTHON, "-c", code], env=dict(env, OPENBLAS_VERBOSE="2"), capture_output=True, text=True)
    core = re.search(r"Core:\s*(\S+)", done.stdout + done.stderr)
    return (core.group(1) if core else None), done.stdout.strip()


def reference_env(blas=None):
    """(the environment for NumPy and PyTorch children, lines saying what was chosen); BLAS:
    the folder of the libblas.so.3 to use, when not the default."""
    env, notes = dict(os.environ), []
    folder = openblas_dir(blas)
    if folder:
        env["LD_LIBRARY_PATH"] = folder + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    else:
        notes.append("OpenBLAS not found nor downloadable: NumPy and PyTorch run the reference BLAS")
    core, library = probe_core(env)
    notes.append(f"BLAS: {library or 'unknown'}")
    wanted = wanted_core(cpu_flags())
    if "OPENBLAS_CORETYPE" in os.environ:
        notes.append(f"OpenBLAS core: {core} (OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} set by the user)")
    elif core and wanted and core not in AT_LEAST[wanted]:
        env["OPENBLAS_CORETYPE"] = wanted
        after, _ = probe_core(env)
        notes.append(f"OpenBLAS core: {core} by default, {after} with OPENBLAS_CORETYPE={wanted} (set)")
    else:
        notes.append(f"OpenBLAS core: {core} by default (its kernels use the CPU's {wanted or 'SSE'} "
                     "instructions: OPENBLAS_CORETYPE not set)")
    return env, notes


def with_threads(env, threads):
    """env with every thread pool PyTorch and OpenBLAS read set to THREADS."""
    return dict(env, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))


def fastest_threads(command_of, env):
    """Times command_of(threads) once at 1 and at nproc threads, interleaved after a warm-up
    at 1; returns (the faster thread count, {threads: seconds})."""
    counts = sorted({1, os.cpu_count() or 1})
    seconds = {}
    subprocess.run(command_of(1), env=with_threads(env, 1), check=True, capture_output=True)
    for threads in counts:
        start = time.perf_counter()
        subprocess.run(command_of(threads), env=with_threads(env, threads), check=True, capture_output=True)
        seconds[threads] = time.perf_counter() - start
    return min(seconds, key=seconds.get), seconds


def read_bandwidth(gib=1, repeat=3, threads=None):
    """Bytes per second of NumPy's max over GIB GiB of float64 (pages touched first), best of
    REPEAT, read by THREADS threads at once (default: every core, as attn reads its weights;
    NumPy lets go of the GIL in a reduction), each over its own slice."""
    from concurrent.futures import ThreadPoolExecutor
    import numpy as np
    threads = threads or os.cpu_count()
    a = np.ones(gib * (1 << 27))
    slices = [a[len(a) * t // threads:len(a) * (t + 1) // threads] for t in range(threads)]
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeat):
            start = time.perf_counter()
            list(pool.map(lambda s: s.max(), slices))
            best = min(best, time.perf_counter() - start)
    return a.nbytes / best


def stored_bytes(folder):
    """The weights' stored bytes: the sizes in each model*.safetensors header of FOLDER, added up."""
    total = 0
    for name in sorted(os.listdir(folder)):
        if name.startswith("model") and name.endswith(".safetensors"):
            with open(os.path.join(folder, name), "rb") as f:
                header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
            total += sum(t["data_offsets"][1] - t["data_offsets"][0] for k, t in header.items() if k != "__metadata__")
    return total


def attn_env(key):
    """The environment of attn's run KEY: "panels ..." runs with ATTN_PANELS=1, the others as
    started (None)."""
    return dict(os.environ, ATTN_PANELS="1") if key.startswith("panels") else None


def median_step(stderr):
    """A token's median step, as `attn generate --timings` prints it on STDERR, or None."""
    found = re.search(r"a token ([0-9.]+) s", stderr)
    return float(found.group(1)) if found else None


def median(values):
    """The middle value (the mean of the two middle ones for an even count)."""
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def verdict(ok):
    """The word a target's line ends with."""
    return "reached" if ok else "NOT reached"


def load_average():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    """Prints the anchors, or with --env the variables bench/run sets for NumPy."""
    blas = sys.argv[sys.argv.index("--blas") + 1] if "--blas" in sys.argv else None
    env, notes = reference_env(blas)
    if "--env" in sys.argv:
        for key in ("LD_LIBRARY_PATH", "OPENBLAS_CORETYPE"):
            if env.get(key) and env.get(key) != os.environ.get(key):
                print(f"{key}={env[key]}")
        print("\n".join(notes), file=sys.stderr)
        return
    for note in notes:
        print(note)
    print(f"read bandwidth: {read_bandwidth() / 1e9:.1f} GB/s on {os.cpu_count()} threads, "
          f"{read_bandwidth(threads=1) / 1e9:.1f} GB/s on one (NumPy max over 1 GiB of float64, best of 3); "
          f"load average {load_average()}")


if __name__ == "__main__":
    main()
