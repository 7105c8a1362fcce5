"""An independent benchmark for the doctor: six model families, six optimizers, many logging habits.

Written without ``chapters.core`` (the course's GPT and Trainer are one family among many): ``tasks``
holds the families (data, model, loss floor), ``cases`` what each case varies, ``train`` the plain loop
that injects the fault into the training and writes the JSONL log. ``bench/doctor_families.py`` runs it.
"""
