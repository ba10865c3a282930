"""The code of the logged pyfunc model ("models from code"): MLflow runs this file to make the model."""

from mlflow.models import set_model

from hydroseq.serving.pyfunc_model import ForecastModel

set_model(ForecastModel())
