// "Open with options…": a dataset path plus what its file cannot say (raw
// layout, angles file, angular range).
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
    explicit OpenDialog(const QString& directory, QWidget* parent = nullptr);
    ~OpenDialog() override;

    QString path() const;
    void setPath(const QString& path);
    tomo::OpenOptions options() const;

private:
    std::unique_ptr<Ui::OpenDialog> ui;
    QString m_directory;
};

} // namespace tomo::ui
