#!/usr/bin/env bash
# The second engine: SQLCipher 4.6.1 (on SQLite 3.46.1) as Debian ships it in
# bookworm-backports (its libsqlcipher1, libsqlcipher-dev and sqlcipher packages),
# fetched with apt and unpacked with dpkg -x into a folder, so the system's own
# packages (SQLCipher 3.4.1 on Debian 12) stay exactly as they are.
#
#   Scripts/sqlcipher4.sh [DIR]      (default .build/sqlcipher4)
#
# Leaves in DIR:
#   root/usr/...        the unpacked packages (header, libsqlcipher.so.1, the shell)
#   pkgconfig/sqlcipher.pc   pointing at them (PKG_CONFIG_PATH=DIR/pkgconfig)
#   lib/libsqlcipher.so.1    the library (linked by that name, see below)
#   bin/sqlcipher            the 4.x shell, runnable (LD_LIBRARY_PATH set inside)
#   env                      the variables a build and a test run need (source it)
# Idempotent: a DIR that already holds a working 4.6.1 is left alone.
set -euo pipefail

DIR=${1:-.build/sqlcipher4}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
VERSION_WANTED="4.6.1"
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

if [ -f "$DIR/env" ] && [ -x "$DIR/bin/sqlcipher" ] \
   && "$DIR/bin/sqlcipher" :memory: 'PRAGMA cipher_version;' 2>/dev/null | grep -q "^$VERSION_WANTED"; then
    exit 0
fi

# The Debian mirror this machine already uses, so no other host is named here.
uri=""
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
    [ -n "$uri" ] && break
done
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
fi
if [ -z "$uri" ]; then
    echo "sqlcipher4: found no Debian mirror in /etc/apt/sources.list(.d); add one, or install SQLCipher 4 and set PKG_CONFIG_PATH" >&2
    exit 1
fi

apt_dir="$DIR/apt"
rm -rf "$apt_dir" "$DIR/root" "$DIR/lib" "$DIR/bin" "$DIR/pkgconfig"
mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$DIR/root"
cat > "$apt_dir/sources/backports.sources" <<EOF
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_options=(
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$apt_dir/sources"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache::Archives=$apt_dir/archives"
    -o "Dir::Cache::pkgcache="
    -o "Dir::Cache::srcpkgcache="
    -o "Debug::NoLocking=1"
    -o "APT::Architecture=$ARCH"
)
echo "sqlcipher4: fetching SQLCipher $VERSION_WANTED (bookworm-backports) into $DIR"
apt-get "${apt_options[@]}" -qq update
(cd "$apt_dir/archives" && apt-get "${apt_options[@]}" -qq download \
    libsqlcipher1/bookworm-backports libsqlcipher-dev/bookworm-backports sqlcipher/bookworm-backports)
for deb in "$apt_dir"/archives/*.deb; do
    dpkg -x "$deb" "$DIR/root"
done

libdir="$DIR/root/usr/lib/$MULTIARCH"
real=$(ls "$libdir"/libsqlcipher.so.1.* 2>/dev/null | head -1)
if [ -z "$real" ]; then
    echo "sqlcipher4: the unpacked packages hold no libsqlcipher.so.1 under $libdir" >&2
    exit 1
fi
# The library is linked by its soname, -l:libsqlcipher.so.1: SwiftPM puts the system's
# libcrypto.pc -L/usr/lib/<multiarch> first on the link line, and -lsqlcipher would find
# SQLCipher 3's libsqlcipher.so there. No system folder holds a libsqlcipher.so.1 (SQLCipher
# 3 is .so.0). SwiftPM drops -Wl,-rpath from a .pc file; the run-time path is given to the
# build as -Xlinker -rpath (SQLCIPHER4_SWIFT_FLAGS in env) and to other processes as LD_LIBRARY_PATH.
mkdir -p "$DIR/lib" "$DIR/bin" "$DIR/pkgconfig"

ln -sf "$real" "$DIR/lib/libsqlcipher.so.1"
cat > "$DIR/pkgconfig/sqlcipher.pc" <<EOF
prefix=$DIR/root/usr
libdir=$DIR/lib
includedir=\${prefix}/include

Name: SQLCipher
Description: SQLCipher $VERSION_WANTED (Debian bookworm-backports, unpacked)
Version: $VERSION_WANTED
Libs: -L\${libdir} -l:libsqlcipher.so.1
Cflags: -I\${includedir} -I\${includedir}/sqlcipher
EOF
cat > "$DIR/bin/sqlcipher" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$DIR/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$DIR/root/usr/bin/sqlcipher" "\$@"
EOF
chmod +x "$DIR/bin/sqlcipher"
cat > "$DIR/env" <<EOF
export PKG_CONFIG_PATH="$DIR/pkgconfig"
export LD_LIBRARY_PATH="$DIR/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PATH="$DIR/bin:\$PATH"
export STRONGROOM_ENGINE=sqlcipher4
export SQLCIPHER4_SWIFT_FLAGS="-Xlinker -rpath -Xlinker $DIR/lib"
EOF

version=$("$DIR/bin/sqlcipher" :memory: 'PRAGMA cipher_version;' 2>/dev/null || true)
case "$version" in
    "$VERSION_WANTED"*) echo "sqlcipher4: SQLCipher $version ready in $DIR" ;;
    *) echo "sqlcipher4: the unpacked shell reports '$version', not $VERSION_WANTED" >&2; exit 1 ;;
esac
