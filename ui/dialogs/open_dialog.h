// "Open with options…": a dataset path plus what its file cannot say (raw
// layout, angles file and which of its entries are the projections' angles,
// angle units, angular range). The fields are remembered for the next time.
#pragma once

#include "tomo/dataset.h"

#include <QDialog>

#include <memory>

namespace Ui {
class OpenDialog;
}

namespace tomo::ui {

class OpenDialog : public QDialog {
    Q_OBJECT
public:
    /// Starts with the fields of the last accepted dialog; file choosers
    /// start in `directory`.
    explicit OpenDialog(const QString& directory, QWidget* parent = nullptr);
    ~OpenDialog() override;

    QString path() const;
    void setPath(const QString& path);
    tomo::OpenOptions options() const;
    void setOptions(const tomo::OpenOptions& options);

    /// Remembers the fields (QSettings), then closes.
    void accept() override;

private:
    void updateAnglesHint();

    std::unique_ptr<Ui::OpenDialog> ui;
    QString m_directory;
};

} // namespace tomo::ui
