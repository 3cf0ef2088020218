#!/bin/sh
# Add Privet to this user's application menu: a .desktop entry pointing at this folder, and the icon.
# Run it again after moving the folder. Nothing outside ~/.local/share is touched.
set -eu
here=$(dirname "$(readlink -f "$0")")
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
mkdir -p "$apps" "$icons"
cp "$here/privet.png" "$icons/privet.png"
sed "s|@BUNDLE@|$here|g" "$here/privet.desktop" > "$apps/privet.desktop"
chmod 0644 "$apps/privet.desktop"
echo "Privet is in your application menu ($apps/privet.desktop)."
