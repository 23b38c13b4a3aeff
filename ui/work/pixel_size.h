// The pixel size of the dataset on screen: from the file's metadata
// (tomo::statedPixelSize), else what the user entered for that dataset
// (remembered with it, like its axis), else not known. The scale bar, the
// attenuation units and Paganin's filter all use this one value.
#pragma once

#include <QString>

namespace tomo::ui {

struct DatasetSummary;

struct DatasetPixelSize {
    enum class Source {
        Unknown, ///< not stated, not entered: the user is asked (once per dataset)
        File,    ///< the file's metadata
        Entered, ///< the user's, for this dataset
        Declined ///< the user said it is not known: not asked again
    };
    double micrometres = 0.0; ///< at the sample; 0 unless File or Entered
    Source source = Source::Unknown;

    bool known() const { return micrometres > 0.0; }
    /// "6.5 µm (from the file)", "6.5 µm (entered)", "not known".
    QString text() const;
    /// "6.5 µm", "148.3 µm", "1.25 mm": the size alone (empty when not known).
    QString sizeText() const;
};

/// The settings key of `path`'s per-dataset value `group` ("axes", "pixelSizes").
QString datasetSettingsKey(const QString& group, const QString& path);

/// The dataset's pixel size: entered for it earlier (wins: a file may be
/// wrong), else the file's, else Unknown (the demo phantom: Declined, it
/// has no physical size).
DatasetPixelSize pixelSizeOf(const DatasetSummary& dataset);
/// Remembers the user's answer for the dataset at `path` (0 µm: not known,
/// do not ask again). Nothing for the demo (empty path).
void rememberPixelSize(const QString& path, double micrometres);

} // namespace tomo::ui
