# SPDX-License-Identifier: Apache-2.0
# Sourced by the Python host tests: confluent-kafka wheels from PyPI for
# Debian's /usr/bin/python3, downloaded once into
# ${XDG_CACHE_HOME:-~/.cache}/keyshift/wheels/<version>-cp<pyver>/ and
# unpacked there (each bundles its own librdkafka in confluent_kafka.libs/).
py=/usr/bin/python3 # Debian's: its python3-confluent-kafka is one host
wheel_cache=${XDG_CACHE_HOME:-$HOME/.cache}/keyshift/wheels
pyver=$($py -c 'import sys; print("%d%d" % sys.version_info[:2])')

# wheel_dir VERSION: the unpacked wheel of confluent-kafka VERSION for $py
wheel_dir() {
  local d=$wheel_cache/$1-cp$pyver
  if [ ! -f "$d/.complete" ]; then
    rm -rf "$d" && mkdir -p "$d/dl"
    $py -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: --python-version "$pyver" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
      --platform manylinux_2_17_x86_64 -d "$d/dl" "confluent-kafka==$1" >&2
    $py -m zipfile -e "$d"/dl/*.whl "$d/site"
    touch "$d/.complete"
  fi
  echo "$d/site"
}
