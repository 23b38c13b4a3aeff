#include "views/value_unit.h"

#include <QCoreApplication>

namespace tomo::ui {

ValueUnit ValueUnit::make(ValueUnitKind kind, double pixelSizeUm) {
    ValueUnit u;
    if (!(pixelSizeUm > 0.0) || kind == ValueUnitKind::PerPixel) return u;
    u.kind = kind;
    // value per pixel / (pixel size in mm or cm)
    u.scale = kind == ValueUnitKind::PerMillimetre ? 1e3 / pixelSizeUm : 1e4 / pixelSizeUm;
    u.symbol = kind == ValueUnitKind::PerMillimetre ? QStringLiteral("1/mm") : QStringLiteral("1/cm");
    return u;
}

ValueUnit ValueUnit::none() {
    ValueUnit u;
    u.symbol.clear();
    return u;
}

QString ValueUnit::format(double stored, int digits) const {
    const QString number = QString::number(shown(stored), 'g', digits);
    return symbol.isEmpty() ? number : number % QLatin1Char(' ') % symbol;
}

QString ValueUnit::quantity() const {
    // Short: it is the title of a small chart's value axis.
    return symbol.isEmpty() ? QCoreApplication::translate("tomo::ui::ValueUnit", "value")
                            : QCoreApplication::translate("tomo::ui::ValueUnit", "μ (%1)").arg(symbol);
}

} // namespace tomo::ui
