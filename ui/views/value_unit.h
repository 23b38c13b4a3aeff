// How reconstructed values are shown. The FBP gives attenuation per pixel
// (the attenuation coefficient times the pixel size); with the pixel size
// known, the views can show the coefficient itself, per mm or per cm.
#pragma once

#include <QString>

namespace tomo::ui {

enum class ValueUnitKind { PerPixel, PerMillimetre, PerCentimetre };

struct ValueUnit {
    ValueUnitKind kind = ValueUnitKind::PerPixel;
    double scale = 1.0;                      ///< shown value = stored value × scale
    QString symbol = QStringLiteral("1/px");    ///< empty: values without a unit (raw counts, −log)

    /// The unit `kind` for pixels of `pixelSizeUm` micrometres; per pixel
    /// when the pixel size is not known (not > 0).
    static ValueUnit make(ValueUnitKind kind, double pixelSizeUm);

    double shown(double stored) const { return stored * scale; }
    double stored(double shownValue) const { return shownValue / scale; }
    /// Raw detector values and line integrals: shown as they are, no unit.
    static ValueUnit none();
    /// "0.01234 1/mm" (`digits` significant digits).
    QString format(double stored, int digits = 4) const;
    /// "μ (1/mm)" (the attenuation coefficient), for axis titles.
    QString quantity() const;
};

} // namespace tomo::ui
