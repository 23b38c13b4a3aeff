// What the workstation keeps between runs (QSettings): the window's place
// and dock layout, the view's choices and the reconstruction options last
// used. Read once when the window is made, written when it closes. What
// belongs to one dataset (its axis, its pixel size) is DatasetSession's;
// where files are proposed is file_places.h.
#pragma once

#include "views/value_unit.h"
#include "work/recon_types.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace tomo::ui {

struct WindowSettings {
    QByteArray geometry; ///< empty on a first start (then the window picks its size and layout)
    QByteArray state;    ///< the docks and toolbars
    QString colormap = QStringLiteral("grey");
    ValueUnitKind valueUnit = ValueUnitKind::PerPixel;
    bool autoWindow = true;
    bool liveUpdate = true;
    /// The options last used (none: the defaults). A strategy this machine
    /// cannot run (settings from a GPU machine) reads as "auto".
    std::optional<tomo::ReconOptions> options;
    ReferenceKind reference = ReferenceKind::Exact; ///< Exact or Truth (a pinned result is not kept)

    /// The saved settings; defaults for what is missing or unreadable
    /// (settings of another version).
    static WindowSettings read();
    void write() const;
};

} // namespace tomo::ui
