"""Offline stand-in for the one Skylib macro Abseil's BUILD files use (absl/BUILD.bazel: "wasm")."""

def _config_setting_group(name, match_any = [], match_all = [], visibility = None):
    """Like Skylib's: an alias that is true when any (or all) of the settings are."""
    if (match_any and match_all) or not (match_any or match_all):
        fail("config_setting_group: give exactly one of match_any, match_all")
    settings = match_any or match_all
    if len(settings) == 1:
        native.alias(name = name, actual = settings[0], visibility = visibility)
        return

    # A chain of aliases, as in Skylib: link i is settings[i] when that one holds
    # (match_any) or fails (match_all), else the next link; the last link is the last setting.
    for i in range(len(settings) - 1):
        link = name if i == 0 else "%s_%d" % (name, i)
        rest = settings[-1] if i == len(settings) - 2 else ":%s_%d" % (name, i + 1)
        if match_any:
            actual = select({settings[i]: settings[i], "//conditions:default": rest})
        else:
            actual = select({settings[i]: rest, "//conditions:default": settings[i]})
        native.alias(name = link, actual = actual, visibility = visibility)

selects = struct(config_setting_group = _config_setting_group)
