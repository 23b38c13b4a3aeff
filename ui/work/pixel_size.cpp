#include "work/pixel_size.h"

#include "work/recon_types.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QSettings>

namespace tomo::ui {

QString DatasetPixelSize::sizeText() const {
    if (!known()) return {};
    return micrometres >= 1000.0 ? QStringLiteral("%1 mm").arg(micrometres / 1000.0, 0, 'g', 4)
                                 : QStringLiteral("%1 µm").arg(micrometres, 0, 'g', 4);
}

QString DatasetPixelSize::text() const {
    switch (source) {
    case Source::File: return QObject::tr("%1 (from the file)").arg(sizeText());
    case Source::Entered: return QObject::tr("%1 (entered)").arg(sizeText());
    case Source::Declined:
    case Source::Unknown: break;
    }
    return QObject::tr("not known");
}

QString datasetSettingsKey(const QString& group, const QString& path) {
    return group % QLatin1Char('/') %
           QString::fromLatin1(
               QCryptographicHash::hash(QFileInfo(path).absoluteFilePath().toUtf8(), QCryptographicHash::Sha1)
                   .toHex()
                   .left(16));
}

DatasetPixelSize pixelSizeOf(const DatasetSummary& dataset) {
    if (dataset.path.isEmpty()) return {0.0, DatasetPixelSize::Source::Declined};
    const QVariant entered = QSettings().value(datasetSettingsKey(QStringLiteral("pixelSizes"), dataset.path));
    if (entered.isValid()) {
        const double um = entered.toDouble();
        return um > 0.0 ? DatasetPixelSize{um, DatasetPixelSize::Source::Entered}
                        : DatasetPixelSize{0.0, DatasetPixelSize::Source::Declined};
    }
    if (dataset.statedPixelSizeUm > 0.0) return {dataset.statedPixelSizeUm, DatasetPixelSize::Source::File};
    return {};
}

void rememberPixelSize(const QString& path, double micrometres) {
    if (path.isEmpty()) return;
    QSettings().setValue(datasetSettingsKey(QStringLiteral("pixelSizes"), path), std::max(0.0, micrometres));
}

} // namespace tomo::ui
