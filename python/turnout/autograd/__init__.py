from turnout.autograd._gradcheck import GradcheckError, gradcheck  # noqa: F401
