#include "work/window_settings.h"

#include "tomo/registry.h"
#include "tomo/run_config.h"

#include <QSettings>

#include <algorithm>

namespace tomo::ui {

WindowSettings WindowSettings::read() {
    QSettings s;
    WindowSettings out;
    if (s.contains(QStringLiteral("window/geometry"))) {
        out.geometry = s.value(QStringLiteral("window/geometry")).toByteArray();
        out.state = s.value(QStringLiteral("window/state")).toByteArray();
    }
    out.colormap = s.value(QStringLiteral("view/colormap"), out.colormap).toString();
    out.valueUnit = static_cast<ValueUnitKind>(std::clamp(s.value(QStringLiteral("view/valueUnit"), 0).toInt(), 0, 2));
    out.autoWindow = s.value(QStringLiteral("view/autoWindow"), true).toBool();
    out.liveUpdate = s.value(QStringLiteral("parameters/live"), true).toBool();
    const QString options = s.value(QStringLiteral("parameters/options")).toString();
    if (!options.isEmpty()) {
        try {
            tomo::ReconOptions o = tomo::runConfigFromJson(options.toStdString()).options;
            // Settings written on another machine (a GPU strategy where
            // there is none here): the fastest available one instead.
            const tomo::Backend* b = tomo::BackendRegistry::instance().find(o.strategy);
            if (o.strategy != "auto" && (!b || !b->unavailableReason().empty())) o.strategy = "auto";
            out.options = o;
        } catch (const std::exception&) {
            // Settings from another version: keep the defaults.
        }
    }
    out.reference = static_cast<ReferenceKind>(std::clamp(s.value(QStringLiteral("view/reference"), 0).toInt(), 0, 1));
    return out;
}

void WindowSettings::write() const {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), geometry);
    s.setValue(QStringLiteral("window/state"), state);
    s.setValue(QStringLiteral("view/colormap"), colormap);
    s.setValue(QStringLiteral("view/valueUnit"), static_cast<int>(valueUnit));
    s.setValue(QStringLiteral("view/autoWindow"), autoWindow);
    s.setValue(QStringLiteral("view/reference"), static_cast<int>(reference));
    s.setValue(QStringLiteral("parameters/live"), liveUpdate);
    tomo::RunConfig config;
    if (options) config.options = *options;
    s.setValue(QStringLiteral("parameters/options"), QString::fromStdString(tomo::toJson(config)));
}

} // namespace tomo::ui
