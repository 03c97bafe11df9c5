"""The hoppers of [Feurstein2021] ch. 4: the hopping controller and the controller's model."""
